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
    // Listen for the signals before the line that tells scripts the server
    // is up: a script may signal as soon as it reads it, and a signal that
    // comes before its handler kills the process with the default action
    // (seen in `binary.rs` under load: exit by SIGINT, not a clean exit).
    let signals = ShutdownSignals::listen();
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
    signals.recv().await;
    server.shutdown().await;
    Ok(())
}

/// SIGINT and SIGTERM, listened for from [`ShutdownSignals::listen`] on.
struct ShutdownSignals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignals {
    #[cfg(unix)]
    fn listen() -> ShutdownSignals {
        use tokio::signal::unix::{signal, SignalKind};
        let on = |kind: SignalKind, name: &str| {
            signal(kind)
                .map_err(|e| tracing::warn!("cannot listen for {name}: {e}"))
                .ok()
        };
        ShutdownSignals {
            int: on(SignalKind::interrupt(), "SIGINT"),
            term: on(SignalKind::terminate(), "SIGTERM"),
        }
    }

    #[cfg(not(unix))]
    fn listen() -> ShutdownSignals {
        ShutdownSignals {}
    }

    /// The first of the two (Ctrl-C elsewhere).
    #[cfg(unix)]
    async fn recv(mut self) {
        async fn one(s: &mut Option<tokio::signal::unix::Signal>) {
            match s {
                Some(s) => _ = s.recv().await,
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            _ = one(&mut self.int) => {}
            _ = one(&mut self.term) => {}
        }
    }

    #[cfg(not(unix))]
    async fn recv(self) {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    }
}
