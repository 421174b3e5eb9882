//! `tidings-server`: parses the options, binds, prints
//! `tidings-server listening on http://HOST:PORT`, serves until SIGINT/SIGTERM.

use std::io::Write;

use clap::Parser;
use tidings_server::{Config, Server};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cfg = Config::parse();
    let host = if cfg.host.contains(':') {
        format!("[{}]", cfg.host)
    } else {
        cfg.host.clone()
    };
    let server = Server::start(cfg).await?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "tidings-server listening on http://{host}:{}",
            server.addr.port()
        )?;
        out.flush()?;
    }
    shutdown_signal().await;
    server.shutdown().await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
