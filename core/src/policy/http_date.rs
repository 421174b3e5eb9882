//! HTTP-date (RFC 9110 §5.6.7): the three formats a recipient must accept, to
//! epoch milliseconds, and the one a sender must produce (IMF-fixdate).
//!
//! ```text
//! IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
//! rfc850-date  Sunday, 06-Nov-94 08:49:37 GMT
//! asctime-date Sun Nov  6 08:49:37 1994
//! ```
//!
//! Parsing is strict about the grammar (names are case-sensitive, as the RFC
//! says) and rejects anything else with `None`, never a panic. The day name must
//! be a valid name but is not checked against the date: the date is what the
//! sender meant, a wrong weekday is a cosmetic bug on its side. Seconds may be
//! 60 (a leap second, which RFC 9110 allows); it counts as the next minute's 00.

use alloc::string::String;

use crate::time::WallMs;

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const DAYS_LONG: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Parse an HTTP-date to milliseconds since the Unix epoch (always a multiple
/// of 1000; negative before 1970). Leading/trailing spaces and tabs are ignored.
///
/// The two-digit year of the obsolete rfc850 form uses a fixed pivot:
/// 70–99 → 1970–1999, 00–69 → 2000–2069. Use [`parse_http_date_near`] for the
/// RFC's rule relative to the current time.
///
/// Returns `None` for anything that is not one of the three formats, or an
/// impossible date or time (30 Feb, 24:00:00).
pub fn parse_http_date(s: &str) -> Option<i64> {
    parse(s, &|yy| if yy >= 70 { 1900 + yy } else { 2000 + yy })
}

/// Like [`parse_http_date`], but a two-digit rfc850 year is resolved as RFC 9110
/// §5.6.7 requires: a year that would be more than 50 years after `now` means
/// the most recent past year with those digits. Concretely the year is chosen
/// in `(Y − 50, Y + 50]`, `Y` being the year of `now`.
pub fn parse_http_date_near(s: &str, now: WallMs) -> Option<i64> {
    let (year_now, _, _) = civil_from_days(now.0.div_euclid(86_400_000));
    parse(s, &|yy| {
        let mut year = year_now - year_now.rem_euclid(100) + yy;
        if year > year_now + 50 {
            year -= 100;
        } else if year <= year_now - 50 {
            year += 100;
        }
        year
    })
}

/// Format epoch milliseconds as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// the form senders must use (RFC 9110 §5.6.7). Milliseconds are floored to the
/// second. `None` when the year is outside 0000–9999 (the format has 4 digits).
pub fn format_imf_fixdate(epoch_ms: i64) -> Option<String> {
    let secs = epoch_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return None;
    }
    // 1970-01-01 (day 0) was a Thursday.
    let wd = DAYS[(days + 4).rem_euclid(7) as usize];
    let mon = MONTHS[(m - 1) as usize];
    Some(alloc::format!(
        "{wd}, {d:02} {mon} {y:04} {:02}:{:02}:{:02} GMT",
        tod / 3600,
        tod / 60 % 60,
        tod % 60
    ))
}

/// The three grammars. `two_digit` maps an rfc850 `yy` to a full year (a
/// `dyn`: one copy of the grammars for both callers, not one each).
fn parse(s: &str, two_digit: &dyn Fn(i64) -> i64) -> Option<i64> {
    let mut c = Cursor {
        b: crate::wire::trim_ows(s).as_bytes(),
        i: 0,
    };
    let (y, m, d, t) = if c.b.get(3) == Some(&b',') {
        // IMF-fixdate: day-name "," SP day SP month SP year SP time SP "GMT"
        c.name(&DAYS)?;
        c.lit(b", ")?;
        let d = c.digits(2)?;
        c.lit(b" ")?;
        let m = c.name(&MONTHS)?;
        c.lit(b" ")?;
        let y = c.digits(4)?;
        c.lit(b" ")?;
        let t = c.time()?;
        c.lit(b" GMT")?;
        (y, m, d, t)
    } else if c.b.get(3) == Some(&b' ') {
        // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time SP year
        c.name(&DAYS)?;
        c.lit(b" ")?;
        let m = c.name(&MONTHS)?;
        c.lit(b" ")?;
        let d = if c.lit(b" ").is_some() {
            c.digits(1)?
        } else {
            c.digits(2)?
        };
        c.lit(b" ")?;
        let t = c.time()?;
        c.lit(b" ")?;
        (c.digits(4)?, m, d, t)
    } else {
        // rfc850-date: day-name-l "," SP day "-" month "-" 2DIGIT SP time SP "GMT"
        c.name(&DAYS_LONG)?;
        c.lit(b", ")?;
        let d = c.digits(2)?;
        c.lit(b"-")?;
        let m = c.name(&MONTHS)?;
        c.lit(b"-")?;
        let y = two_digit(c.digits(2)?);
        c.lit(b" ")?;
        let t = c.time()?;
        c.lit(b" GMT")?;
        (y, m, d, t)
    };
    if c.i != c.b.len() || d < 1 || d > days_in_month(y, m + 1) {
        return None;
    }
    let days = days_from_civil(y, m + 1, d);
    Some((days * 86_400 + t) * 1000)
}

/// A byte cursor; every method returns `None` (and may leave the cursor
/// anywhere) when the input does not match.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn lit(&mut self, lit: &[u8]) -> Option<()> {
        let end = self.i.checked_add(lit.len())?;
        if self.b.get(self.i..end)? == lit {
            self.i = end;
            Some(())
        } else {
            None
        }
    }

    /// Exactly `n` ASCII digits.
    fn digits(&mut self, n: usize) -> Option<i64> {
        let end = self.i.checked_add(n)?;
        let mut v = 0i64;
        for &b in self.b.get(self.i..end)? {
            if !b.is_ascii_digit() {
                return None;
            }
            v = v * 10 + i64::from(b - b'0');
        }
        self.i = end;
        Some(v)
    }

    /// One of `names` (case-sensitive); its index.
    fn name(&mut self, names: &[&str]) -> Option<i64> {
        let rest = self.b.get(self.i..)?;
        let (idx, name) = names
            .iter()
            .enumerate()
            .find(|(_, n)| rest.starts_with(n.as_bytes()))?;
        self.i += name.len();
        Some(idx as i64)
    }

    /// `hh:mm:ss` as seconds of the day; second 60 allowed (leap second).
    fn time(&mut self) -> Option<i64> {
        let h = self.digits(2)?;
        self.lit(b":")?;
        let m = self.digits(2)?;
        self.lit(b":")?;
        let s = self.digits(2)?;
        (h <= 23 && m <= 59 && s <= 60).then_some(h * 3600 + m * 60 + s)
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days in month `m` (1–12) of year `y`.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant,
/// "chrono-Compatible Low-Level Date Algorithms", `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`]: (year, month 1–12, day 1–31).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::{any, prop_assert_eq, proptest};

    /// 1994-11-06T08:49:37Z, the RFC's example.
    const RFC_EXAMPLE_MS: i64 = 784_111_777_000;

    #[test]
    fn the_three_rfc_examples() {
        for s in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun Nov 06 08:49:37 1994",
            "  Sun, 06 Nov 1994 08:49:37 GMT\t",
        ] {
            assert_eq!(parse_http_date(s), Some(RFC_EXAMPLE_MS), "{s}");
        }
    }

    #[test]
    fn formats_the_rfc_example() {
        assert_eq!(
            format_imf_fixdate(RFC_EXAMPLE_MS + 999).as_deref(),
            Some("Sun, 06 Nov 1994 08:49:37 GMT")
        );
        assert_eq!(
            format_imf_fixdate(0).as_deref(),
            Some("Thu, 01 Jan 1970 00:00:00 GMT")
        );
        assert_eq!(
            format_imf_fixdate(-1).as_deref(),
            Some("Wed, 31 Dec 1969 23:59:59 GMT")
        );
        assert_eq!(format_imf_fixdate(i64::MAX), None);
        assert_eq!(format_imf_fixdate(i64::MIN), None);
    }

    #[test]
    fn edge_dates() {
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(951_825_600_000)
        );
        // A leap second is the next minute's 00.
        assert_eq!(
            parse_http_date("Sat, 31 Dec 2016 23:59:60 GMT"),
            parse_http_date("Sun, 01 Jan 2017 00:00:00 GMT")
        );
        // The weekday is not checked against the date.
        assert_eq!(
            parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT"),
            Some(RFC_EXAMPLE_MS)
        );
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "0",
            "120",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 30 Feb 1994 08:49:37 GMT",
            "Sun, 29 Feb 1900 08:49:37 GMT",
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT extra",
            "Sun, 06 Nov 1994 08:49:3",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov  6 08:49:37 94",
            "Sun, +6 Nov 1994 08:49:37 GMT",
            "Sün, 06 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(s), None, "{s:?}");
        }
    }

    #[test]
    fn two_digit_years() {
        let at = |s: &str| parse_http_date(s).and_then(format_imf_fixdate);
        assert_eq!(
            at("Thursday, 01-Jan-70 00:00:00 GMT").as_deref(),
            Some("Thu, 01 Jan 1970 00:00:00 GMT")
        );
        assert_eq!(
            at("Sunday, 01-Jan-69 00:00:00 GMT").as_deref(),
            Some("Tue, 01 Jan 2069 00:00:00 GMT")
        );
        // Relative to 2026: "76" would be 2076 (exactly 50 years ahead: kept),
        // "77" would be 2077 (more than 50 years ahead): 1977.
        let now = WallMs(1_780_000_000_000); // 2026-05-28
        let near = |s: &str| parse_http_date_near(s, now).and_then(format_imf_fixdate);
        assert_eq!(
            near("Sunday, 01-Jan-76 00:00:00 GMT").as_deref(),
            Some("Wed, 01 Jan 2076 00:00:00 GMT")
        );
        assert_eq!(
            near("Sunday, 01-Jan-77 00:00:00 GMT").as_deref(),
            Some("Sat, 01 Jan 1977 00:00:00 GMT")
        );
        assert_eq!(
            parse_http_date_near("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Some(RFC_EXAMPLE_MS)
        );
    }

    /// Test-only formatters for the two obsolete forms, for round trips.
    fn format_obsolete(ms: i64) -> (String, String) {
        let secs = ms.div_euclid(1000);
        let days = secs.div_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let wd = (days + 4).rem_euclid(7) as usize;
        let mon = MONTHS[(m - 1) as usize];
        let t = secs.rem_euclid(86_400);
        let hms = format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60);
        (
            format!("{}, {d:02}-{mon}-{:02} {hms} GMT", DAYS_LONG[wd], y % 100),
            format!("{} {mon} {d:>2} {hms} {y}", DAYS[wd]),
        )
    }

    proptest! {
        #[test]
        fn any_string_no_panic(s in ".*") {
            let _ = parse_http_date(&s);
            let _ = parse_http_date_near(&s, WallMs(0));
        }

        #[test]
        fn near_miss_no_panic(s in "[A-Za-z]{3,9}[, ]{1,2}[0-9 -]{1,3}[A-Za-z]{0,4}[ -][0-9]{1,5} [0-9:]{0,9}( GMT)?") {
            let _ = parse_http_date(&s);
        }

        #[test]
        fn round_trip_1970_to_2100(ms in 0i64..4_102_444_800_000) {
            let whole = ms - ms % 1000;
            let imf = format_imf_fixdate(ms).unwrap_or_default();
            prop_assert_eq!(parse_http_date(&imf), Some(whole));
            let (rfc850, asctime) = format_obsolete(ms);
            prop_assert_eq!(parse_http_date(&asctime), Some(whole));
            prop_assert_eq!(parse_http_date_near(&rfc850, WallMs(ms)), Some(whole));
            if ms < 3_155_760_000_000 { // before 2070: the fixed pivot holds
                prop_assert_eq!(parse_http_date(&rfc850), Some(whole));
            }
        }

        #[test]
        fn any_time_formats_or_refuses(ms in any::<i64>()) {
            if let Some(s) = format_imf_fixdate(ms) {
                prop_assert_eq!(parse_http_date(&s), Some(ms.div_euclid(1000) * 1000));
            }
        }
    }
}
