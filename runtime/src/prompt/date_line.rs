//! The date line near the end of the system prompt: pi's `Current date: 2026-03-07` (the default), or the
//! seeds' `Current date and time: Saturday, March 7, 2026 at 08:55:05 AM CST` (weekday, local time and the
//! time zone's abbreviation), chosen by the YAML's `system_prompt.date_line`.

use chrono::{DateTime, Datelike, Local, Timelike};

/// Which date line the prompt ends with (before the working directory).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DateLine {
    /// `Current date: YYYY-MM-DD`, as pi 0.73.1 writes it.
    #[default]
    Date,
    /// `Current date and time: <weekday>, <month> <day>, <year> at <hh:mm:ss> <AM|PM> <zone>`, as the seeds
    /// (002, 004) describe it.
    DateTime,
}

const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

impl DateLine {
    /// The line (without a newline) for `now`, or for `given` text when set (tests fix the date).
    pub fn line(self, given: Option<&str>) -> String {
        match self {
            Self::Date => {
                let date = given.map_or_else(|| Local::now().format("%Y-%m-%d").to_string(), str::to_owned);
                format!("Current date: {date}")
            }
            Self::DateTime => {
                let when = given.map_or_else(|| date_time_text(&Local::now(), &zone_abbreviation()), str::to_owned);
                format!("Current date and time: {when}")
            }
        }
    }
}

/// `Saturday, March 7, 2026 at 08:55:05 AM CST`: the form `toLocaleString("en-US")` gives with a long
/// weekday and month, two-digit time and a short zone name.
pub fn date_time_text(now: &DateTime<Local>, zone: &str) -> String {
    let weekday = WEEKDAYS[now.weekday().num_days_from_monday() as usize];
    let month = MONTHS[now.month0() as usize];
    let (pm, hour) = now.hour12();
    let half = if pm { "PM" } else { "AM" };
    format!(
        "{weekday}, {month} {}, {} at {hour:02}:{:02}:{:02} {half} {zone}",
        now.day(),
        now.year(),
        now.minute(),
        now.second()
    )
}

/// The local time zone's abbreviation now (`CST`, `CET`, `UTC`), from the C library's view of `TZ` and
/// /etc/localtime; where there is none, the offset as `GMT+1` (as JavaScript shows it).
fn zone_abbreviation() -> String {
    let now = Local::now();
    let seconds = now.timestamp() as libc::time_t;
    // SAFETY: `localtime_r` writes only into the `tm` we own; `tm_zone` then points at a static, NUL-terminated
    // string of the C library's (valid until TZ changes), which is copied at once.
    let abbreviation = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&seconds, &mut tm).is_null() || tm.tm_zone.is_null() {
            None
        } else {
            Some(std::ffi::CStr::from_ptr(tm.tm_zone).to_string_lossy().into_owned())
        }
    };
    match abbreviation {
        // glibc writes zones without a letter abbreviation as "+03" or "-0330".
        Some(name) if name.chars().any(|c| c.is_ascii_alphabetic()) => name,
        _ => gmt_offset(now.offset().local_minus_utc()),
    }
}

/// `GMT+1`, `GMT-3:30`, `GMT` for an offset in seconds east of UTC.
fn gmt_offset(seconds: i32) -> String {
    if seconds == 0 {
        return "GMT".to_owned();
    }
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.abs() / 60;
    match minutes % 60 {
        0 => format!("GMT{sign}{}", minutes / 60),
        rest => format!("GMT{sign}{}:{rest:02}", minutes / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_seeds_form_has_weekday_twelve_hour_time_and_zone() {
        let morning = Local.with_ymd_and_hms(2026, 3, 7, 8, 55, 5).single().expect("a local time");
        assert_eq!(date_time_text(&morning, "CST"), "Saturday, March 7, 2026 at 08:55:05 AM CST");
        let evening = Local.with_ymd_and_hms(2026, 11, 29, 23, 5, 0).single().expect("a local time");
        assert_eq!(date_time_text(&evening, "UTC"), "Sunday, November 29, 2026 at 11:05:00 PM UTC");
        let noon = Local.with_ymd_and_hms(2026, 1, 1, 12, 0, 0).single().expect("a local time");
        assert!(date_time_text(&noon, "X").contains("at 12:00:00 PM"));
    }

    #[test]
    fn lines_and_offsets() {
        assert_eq!(DateLine::Date.line(Some("2026-03-07")), "Current date: 2026-03-07");
        assert_eq!(DateLine::DateTime.line(Some("then")), "Current date and time: then");
        let live = DateLine::DateTime.line(None);
        assert!(live.starts_with("Current date and time: ") && live.contains(" at "), "{live}");
        assert!(live.ends_with(|c: char| c.is_ascii_alphanumeric()), "{live}");
        assert_eq!(gmt_offset(3600), "GMT+1");
        assert_eq!(gmt_offset(-12600), "GMT-3:30");
        assert_eq!(gmt_offset(0), "GMT");
    }
}
