//! Shared state and the router.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;
use tower_http::services::ServeDir;

use crate::ack::AckStore;
use crate::clock::{wall_now, Clock};
use crate::config::Config;
use crate::faults::{self, Faults};
use crate::hub::Hub;
use crate::log::RequestLog;
use crate::send::SendStore;
use crate::{ack, answer, cors, log, long_poll, poll, publish, send, sse};

/// Everything the handlers share.
#[derive(Debug)]
pub struct Shared {
    pub cfg: Config,
    pub hub: Hub,
    pub log: RequestLog,
    pub faults: Faults,
    pub clock: Clock,
    /// `POST /send`'s idempotency store; kept across `/_restart`.
    pub sends: SendStore,
    /// Delivery ACKs and re-send counts (`ack.rs`); kept across `/_restart`.
    pub acks: AckStore,
    /// Wall time of the start (`Last-Modified` of `/resource` before the
    /// first publish).
    pub started: SystemTime,
    /// Cancelled on shutdown: open streams end so shutdown does not hang.
    pub shutdown: CancellationToken,
    next_req: AtomicU64,
    next_conn: AtomicU64,
}

pub type AppState = Arc<Shared>;

impl Shared {
    pub fn new(cfg: Config) -> AppState {
        let cap = usize::try_from(cfg.buffer).unwrap_or(usize::MAX);
        let queue = usize::try_from(cfg.stream_queue).unwrap_or(usize::MAX);
        Arc::new(Shared {
            hub: Hub::new(cap, queue),
            log: RequestLog::new(cfg.log_capacity, cfg.quiet),
            faults: Faults::default(),
            clock: Clock::start(),
            sends: SendStore::default(),
            acks: AckStore::default(),
            started: wall_now(),
            shutdown: CancellationToken::new(),
            next_req: AtomicU64::new(1),
            next_conn: AtomicU64::new(1),
            cfg,
        })
    }

    pub fn next_req_id(&self) -> u64 {
        self.next_req.fetch_add(1, Ordering::Relaxed)
    }

    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }
}

fn no_cache<B>(mut resp: Response<B>) -> Response<B> {
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

pub fn router(s: AppState) -> Router {
    // Static files always revalidate: tests must never run a stale build.
    let pkg = ServiceExt::<Request>::map_response(ServeDir::new(&s.cfg.pkg), no_cache);
    let www = ServiceExt::<Request>::map_response(ServeDir::new(&s.cfg.www), no_cache);
    Router::new()
        .route("/sse", get(sse::sse))
        .route("/publish", post(publish::publish))
        .route("/long-poll", get(long_poll::long_poll))
        .route("/poll", get(poll::poll))
        .route("/resource", get(poll::resource))
        .route("/answer", post(answer::answer).get(answer::answer))
        .route("/send", post(send::send))
        .route("/_send", get(send::get_applied))
        .route("/_send/clear", post(send::clear))
        .route("/ack", post(ack::ack))
        .route("/_ack", get(ack::get_acks))
        .route("/_ack/clear", post(ack::clear))
        .route("/_log", get(log::get_log))
        .route("/_token", get(faults::get_token))
        .route("/_log/clear", post(log::clear_log))
        .route(
            "/_faults",
            get(faults::get_faults)
                .post(faults::post_faults)
                .delete(faults::delete_faults),
        )
        .route("/_restart", post(faults::post_restart))
        .nest_service("/pkg", pkg)
        .fallback_service(www)
        .layer(from_fn_with_state(s.clone(), faults::middleware))
        .layer(cors::layer())
        .layer(from_fn_with_state(s.clone(), log::middleware))
        .with_state(s)
}
