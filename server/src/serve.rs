//! The accept loop: one task per TCP connection (so each request knows its
//! connection id), graceful shutdown that cannot hang on open streams.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::app::{self, AppState, Shared};
use crate::config::Config;
use crate::faults::{DropConnection, RestartMode};

/// How long in-flight responses may take to finish after shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(1000);

/// Request extension: which TCP connection carried the request.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo {
    pub id: u64,
    pub remote: SocketAddr,
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    /// The bound address (the real port when 0 was asked for).
    pub addr: SocketAddr,
    pub state: AppState,
    task: JoinHandle<()>,
}

impl Server {
    /// Binds `cfg.host:cfg.port` and starts serving.
    pub async fn start(cfg: Config) -> anyhow::Result<Server> {
        let listener = TcpListener::bind((cfg.host.as_str(), cfg.port)).await?;
        let addr = listener.local_addr()?;
        let state = Shared::new(cfg);
        let router = app::router(state.clone());
        let task = tokio::spawn(accept_loop(listener, router, state.clone()));
        Ok(Server { addr, state, task })
    }

    /// `http://ip:port` of the bound address.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, ends open streams, lets in-flight responses finish
    /// (at most a few seconds), then returns.
    pub async fn shutdown(self) {
        self.state.shutdown.cancel();
        let _ = self.task.await;
    }
}

async fn accept_loop(listener: TcpListener, router: Router, s: AppState) {
    let tracker = TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = s.shutdown.cancelled() => break,
            r = listener.accept() => r,
        };
        let (tcp, remote) = match accepted {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        let info = ConnInfo {
            id: s.next_conn_id(),
            remote,
        };
        tracker.spawn(serve_conn(tcp, info, router.clone(), s.clone()));
    }
    drop(listener);
    tracker.close();
    if tokio::time::timeout(SHUTDOWN_GRACE * 2, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after shutdown; exiting anyway");
    }
}

async fn serve_conn(tcp: TcpStream, info: ConnInfo, router: Router, s: AppState) {
    let io = TokioIo::new(tcp);
    let state = s.clone();
    let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(info);
        let router = router.clone();
        let s = state.clone();
        async move {
            // During a `/_restart` window in "refuse" mode, requests outside
            // `/_…` get no answer: the connection is closed, as by a server
            // that is down.
            let path = req.uri().path();
            if !path.starts_with("/_") {
                if let Some((RestartMode::Refuse, _)) = s.faults.restarting(s.clock.ms()) {
                    s.log.refused(&s, info.id, &req);
                    return Err(std::io::Error::other("restarting: connection refused"));
                }
            }
            let resp = router
                .oneshot(req.map(Body::new))
                .await
                .unwrap_or_else(|e: Infallible| match e {});
            // A `drop-response` fault: the endpoint has run, its answer is
            // never sent (hyper closes the connection on a service error).
            if resp.extensions().get::<DropConnection>().is_some() {
                return Err(std::io::Error::other("fault: response dropped"));
            }
            Ok::<_, std::io::Error>(resp)
        }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).auto_date_header(false);
    let conn = builder.serve_connection(io, svc);
    tokio::pin!(conn);
    let mut restart = s.faults.subscribe_restart();
    let mut restart_live = true;
    let mut draining = false;
    // After shutdown, a response that cannot finish (a client that stopped
    // reading) gets this long before its connection is dropped.
    let grace = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(grace);
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!("conn {}: {e}", info.id);
                }
                break;
            }
            _ = s.shutdown.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
                grace.as_mut().reset(tokio::time::Instant::now() + SHUTDOWN_GRACE);
            }
            _ = &mut grace, if draining => break,
            r = restart.changed(), if restart_live => match r {
                Ok(()) => {
                    if restart.borrow_and_update().except_conn != info.id {
                        // Dropped at once, mid-response or idle.
                        break;
                    }
                }
                Err(_) => restart_live = false,
            },
        }
    }
}
