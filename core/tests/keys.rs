//! The share key, the remembered downgrade's key and its record
//! (`tidings_core::keys`): computed from the parsed options, never holding a
//! URL or a header value. Exact values are pinned: a change of the downgrade
//! key forgets every remembered downgrade, one of the share key keeps two
//! versions of the app in two tabs apart.

use tidings_core::engine::{Config, CrossOrigin, Live, TransportKind};
use tidings_core::keys::{
    credentials_tag, downgrade_key, downgrade_record, parse_downgrade, persist_tag, share_key,
    PageOptions, DOWNGRADE_PREFIX, SHARE_PREFIX,
};
use tidings_core::time::WallMs;

const URL: &str = "https://h.example/sse?token=SECRET-123";

fn config(url: &str) -> Config {
    Config::new(url).sanitized()
}

fn key(c: &Config) -> String {
    share_key(c, &PageOptions::default()).unwrap_or_default()
}

/// `key` is `prefix` and 16 hex digits, and holds no part of `URL`.
fn assert_hashed(key: &str, prefix: &str) {
    let hex = key.strip_prefix(prefix).unwrap_or_default();
    assert!(
        hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
        "{key}"
    );
    for part in ["SECRET-123", "token", "h.example", "https"] {
        assert!(!key.contains(part), "{key} holds {part}");
    }
}

#[test]
fn share_key_is_a_pinned_hash_of_the_parsed_options() {
    let k = key(&config(URL));
    assert_eq!(k, "tidings:839525985f5469cc");
    assert_hashed(&k, SHARE_PREFIX);
    // Another query, another connection.
    assert_eq!(
        key(&config("https://h.example/sse?token=SECRET-124")),
        "tidings:3e1346c6089ad701"
    );
}

#[test]
fn share_key_ignores_the_order_options_were_given_in_and_explicit_defaults() {
    // The same options set in two orders (as two JS objects with their keys
    // in another order parse), and the defaults spelled out or left out.
    let mut a = Config::new(URL);
    a.events = vec!["price".into()];
    a.fallback.remember_ms = 60_000;
    a.transports = vec![TransportKind::FetchSse, TransportKind::LongPoll];
    let mut b = Config::new(URL);
    b.transports = vec![
        TransportKind::FetchSse,
        TransportKind::LongPoll,
        TransportKind::FetchSse,
    ];
    b.fallback.remember_ms = 60_000;
    b.events = vec!["price".into(), String::new()];
    b.heartbeat_event = "heartbeat".into();
    b.last_event_id_param = String::new();
    let (a, b) = (a.sanitized(), b.sanitized());
    assert_eq!(key(&a), key(&b));
    assert_eq!(key(&a), "tidings:84ce2b6a9afea4e2");
    assert_ne!(key(&a), key(&config(URL)));
}

#[test]
fn share_key_hashes_every_chosen_field_and_nothing_derived() {
    let base = config(URL);
    let k = key(&base);
    let changed: Vec<(&str, Config)> = vec![
        ("urls", {
            let mut c = base.clone();
            c.urls.poll = Some("https://h.example/poll".into());
            c
        }),
        ("transports", {
            let mut c = base.clone();
            c.transports.reverse();
            c
        }),
        ("events", {
            let mut c = base.clone();
            c.events = vec!["a".into()];
            c
        }),
        ("lastEventId", {
            let mut c = base.clone();
            c.last_event_id = "7".into();
            c
        }),
        ("live: \"sse\"", {
            let mut c = base.clone();
            c.live = Live::Sse;
            c
        }),
        ("live: false", {
            let mut c = base.clone();
            c.live = Live::Off;
            c
        }),
        ("backoff", {
            let mut c = base.clone();
            c.backoff.floor_ms += 1;
            c
        }),
        ("breaker", {
            let mut c = base.clone();
            c.breaker.cooldown_ms += 1;
            c
        }),
        ("interval", {
            let mut c = base.clone();
            c.interval.max_ms += 1;
            c
        }),
        ("watchdog", {
            let mut c = base.clone();
            c.watchdog.idle_timeout_ms += 1;
            c
        }),
        ("pauseWhenHidden", {
            let mut c = base.clone();
            c.pause_when_hidden = None;
            c
        }),
        ("maxMessageBytes", {
            let mut c = base.clone();
            c.sse_limits.max_line_bytes += 1;
            c
        }),
    ];
    for (what, c) in &changed {
        assert_ne!(key(c), k, "{what}");
    }
    // Each change its own key (`live: "sse"` and `live: false` apart).
    let mut keys: Vec<String> = changed.iter().map(|(_, c)| key(c)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), changed.len());
    // Derived by the browser side from the options: no part of the key.
    let mut derived = base.clone();
    derived.cross_origin = CrossOrigin::ALL;
    derived.downgrade = Some((TransportKind::Poll, WallMs(5)));
    assert_eq!(key(&derived), k);
    // Each page-side option.
    let page = PageOptions::default();
    let pages = [
        PageOptions {
            with_credentials: true,
            ..page
        },
        PageOptions {
            debug: true,
            ..page
        },
        PageOptions {
            lost_after_ms: 1,
            ..page
        },
        PageOptions {
            seed: Some(0),
            ..page
        },
        PageOptions {
            cross_tab: true,
            ..page
        },
    ];
    for p in pages {
        assert_ne!(share_key(&base, &p), Some(k.clone()), "{p:?}");
    }
}

/// `headers` or a `url` function: shared only with the hash of what they
/// resolved to; the same credentials give the same key, others another;
/// the key holds no part of them.
#[test]
fn credentials_share_by_their_hash() {
    let cross = PageOptions {
        cross_tab: true,
        ..PageOptions::default()
    };
    let with = |tag: &str| PageOptions {
        credentials: credentials_tag(tag),
        ..cross
    };
    for (headers, url_function) in [(true, false), (false, true), (true, true)] {
        let mut c = config(URL);
        c.has_custom_headers = headers;
        c.url_function = url_function;
        assert_eq!(share_key(&c, &cross), None);
        let a = share_key(&c, &with("Bearer tok1-s3cr3t")).unwrap_or_default();
        assert!(a.starts_with(SHARE_PREFIX), "shared: {a}");
        assert_eq!(share_key(&c, &with("Bearer tok1-s3cr3t")), Some(a.clone()));
        assert_ne!(share_key(&c, &with("Bearer tok2-s3cr3t")), Some(a.clone()));
        assert!(!a.contains("tok1") && !a.contains("s3cr3t"), "{a}");
        // Not the key of the same options without credentials.
        assert_ne!(share_key(&config(URL), &cross), Some(a));
    }
    assert_ne!(credentials_tag(""), 0);
}

#[test]
fn with_headers_there_is_no_share_key() {
    let mut c = config(URL);
    c.has_custom_headers = true;
    assert_eq!(
        share_key(
            &c,
            &PageOptions {
                cross_tab: true,
                ..PageOptions::default()
            }
        ),
        None
    );
}

#[test]
fn downgrade_key_is_a_pinned_hash_of_the_endpoints() {
    let k = downgrade_key(&config(URL));
    assert_eq!(k, "tidings:downgrade:4d8a15b9a54dcd93");
    assert_hashed(&k, DOWNGRADE_PREFIX);
    assert_ne!(
        downgrade_key(&config("https://h.example/sse?token=SECRET-124")),
        k
    );
    let mut other = config(URL);
    other.urls.long_poll = Some("https://h.example/lp?token=SECRET-123".into());
    let lp = downgrade_key(&other);
    assert_hashed(&lp, DOWNGRADE_PREFIX);
    assert_ne!(lp, k);
    // The rest of the options: the same endpoints, the same memory.
    let mut policy = config(URL);
    policy.backoff.floor_ms = 5_000;
    policy.events = vec!["price".into()];
    assert_eq!(downgrade_key(&policy), k);
}

#[test]
fn downgrade_record_parses_back() {
    for (t, until, text) in [
        (
            TransportKind::LongPoll,
            1_700_000_600_000,
            "long-poll 1700000600000",
        ),
        (TransportKind::Poll, 0, "poll 0"),
        (TransportKind::FetchSse, 5, "fetch-sse 5"),
        (TransportKind::Poll, i64::MAX, "poll 9223372036854775807"),
    ] {
        assert_eq!(downgrade_record(t, WallMs(until)), text);
        assert_eq!(parse_downgrade(text), Some((t, WallMs(until))));
    }
    // Before the epoch: passed anyway, written as the epoch.
    assert_eq!(
        downgrade_record(TransportKind::Poll, WallMs(i64::MIN)),
        "poll 0"
    );
    assert_eq!(downgrade_record(TransportKind::Poll, WallMs(-5)), "poll 0");
}

#[test]
fn malformed_downgrade_records_are_ignored() {
    for bad in [
        "",
        " ",
        "long-poll",
        "long-poll ",
        " 5",
        "long-poll  5",
        "long-poll 5 ",
        "long-poll 5 6",
        "long-poll +5",
        "long-poll 0x10",
        "long-poll 1.5",
        "long-poll 12x",
        "long-poll --5",
        "Long-Poll 5",
        "carrier-pigeon 5",
        "eventsource 5",
        "poll 9223372036854775808",
        "poll 99999999999999999999",
        "poll -9223372036854775808",
        "poll -",
        "poll -5",
        "long-poll\t5",
        "https://h.example/sse?token=SECRET-123",
        "long-poll ٥",
    ] {
        assert_eq!(parse_downgrade(bad), None, "{bad:?}");
    }
}

#[test]
fn persisted_and_unpersisted_subscriptions_never_share() {
    let c = config("https://example.com/updates");
    let plain = PageOptions::default();
    let local = PageOptions {
        persist: persist_tag(true, None),
        ..plain
    };
    let session = PageOptions {
        persist: persist_tag(false, None),
        ..plain
    };
    let named = PageOptions {
        persist: persist_tag(true, Some("room-1")),
        ..plain
    };
    let keys: Vec<_> = [plain, local, session, named]
        .iter()
        .map(|p| share_key(&c, p).unwrap_or_default())
        .collect();
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert!(keys.iter().all(|k| k.starts_with(SHARE_PREFIX)));
    assert_ne!(persist_tag(true, None), 0);
    let again = PageOptions {
        persist: persist_tag(true, Some("room-1")),
        ..plain
    };
    assert_eq!(share_key(&c, &again), share_key(&c, &named));
}
