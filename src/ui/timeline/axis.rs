//! Durations as people read them, and the time axis's ticks: round steps (0.2 s, 15 s, 15 min,
//! 1 h …) chosen so that the labels never crowd, whether the run took two seconds or two hours.

const SECOND: u64 = 1000;
const MINUTE: u64 = 60 * SECOND;
const HOUR: u64 = 60 * MINUTE;

/// The steps a tick may take, shortest first.
const STEPS: [u64; 24] = [
    10,
    20,
    50,
    100,
    200,
    500,
    SECOND,
    2 * SECOND,
    5 * SECOND,
    10 * SECOND,
    15 * SECOND,
    30 * SECOND,
    MINUTE,
    2 * MINUTE,
    5 * MINUTE,
    10 * MINUTE,
    15 * MINUTE,
    30 * MINUTE,
    HOUR,
    2 * HOUR,
    3 * HOUR,
    6 * HOUR,
    12 * HOUR,
    24 * HOUR,
];

/// A duration for a sum or a tooltip: `45 ms`, `2.3 s`, `42 s`, `3 min 05 s`, `2 h 03 min`.
pub fn duration(ms: u64) -> String {
    if ms < SECOND {
        format!("{ms} ms")
    } else if ms < 10 * SECOND {
        format!("{:.1} s", ms as f64 / SECOND as f64)
    } else if ms < MINUTE {
        format!("{} s", ms / SECOND)
    } else if ms < HOUR {
        format!("{} min {:02} s", ms / MINUTE, ms % MINUTE / SECOND)
    } else {
        format!("{} h {:02} min", ms / HOUR, ms % HOUR / MINUTE)
    }
}

/// The ticks of an axis `total` ms long, at most `max_ticks` intervals: `(offset, label)`.
pub fn ticks(total: u64, max_ticks: u64) -> Vec<(u64, String)> {
    let max_ticks = max_ticks.max(1);
    let step = STEPS.iter().copied().find(|step| total.div_ceil(*step) <= max_ticks).unwrap_or_else(|| {
        // Longer than 24 steps of a day: whole days.
        total.div_ceil(max_ticks).div_ceil(24 * HOUR) * 24 * HOUR
    });
    (0..=total / step).map(|k| k * step).map(|at| (at, tick_label(at, step))).collect()
}

/// A tick's label, as precise as its step: `0.4 s`, `1 min 30 s`, `1 h 15 min`.
fn tick_label(at: u64, step: u64) -> String {
    if at == 0 {
        return "0".into();
    }
    if step < SECOND {
        let decimals = if step < 100 { 2 } else { 1 };
        return format!("{:.*} s", decimals, at as f64 / SECOND as f64);
    }
    let (hours, minutes, seconds) = (at / HOUR, at % HOUR / MINUTE, at % MINUTE / SECOND);
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours} h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes} min"));
    }
    if seconds > 0 {
        parts.push(format!("{seconds} s"));
    }
    parts.join(" ")
}

/// `YYYY-MM-DD HH:MM UTC` of a time in ms since the epoch.
pub fn utc(ms: u64) -> String {
    let secs = ms / SECOND;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rest / 3600, rest % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(total: u64, max_ticks: u64) -> Vec<String> {
        ticks(total, max_ticks).into_iter().map(|(_, label)| label).collect()
    }

    #[test]
    fn a_two_second_run_ticks_in_fifths_of_a_second() {
        assert_eq!(
            labels(2000, 10),
            ["0", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1.0 s", "1.2 s", "1.4 s", "1.6 s", "1.8 s", "2.0 s"]
        );
        assert_eq!(labels(2300, 10), ["0", "0.5 s", "1.0 s", "1.5 s", "2.0 s"]);
        assert_eq!(
            labels(80, 10),
            ["0", "0.01 s", "0.02 s", "0.03 s", "0.04 s", "0.05 s", "0.06 s", "0.07 s", "0.08 s"]
        );
    }

    #[test]
    fn a_two_hour_run_ticks_in_quarter_hours() {
        assert_eq!(
            labels(2 * HOUR, 10),
            ["0", "15 min", "30 min", "45 min", "1 h", "1 h 15 min", "1 h 30 min", "1 h 45 min", "2 h"]
        );
        assert_eq!(
            labels(90 * SECOND, 10),
            ["0", "10 s", "20 s", "30 s", "40 s", "50 s", "1 min", "1 min 10 s", "1 min 20 s", "1 min 30 s"]
        );
    }

    #[test]
    fn ticks_never_exceed_the_room_even_for_days_or_nothing() {
        assert_eq!(labels(0, 10), ["0"]);
        assert!(ticks(40 * 24 * HOUR, 10).len() <= 11);
        assert!(ticks(7 * HOUR + 1, 10).len() <= 11);
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(45), "45 ms");
        assert_eq!(duration(2340), "2.3 s");
        assert_eq!(duration(42_000), "42 s");
        assert_eq!(duration(185_000), "3 min 05 s");
        assert_eq!(duration(2 * HOUR + 3 * MINUTE), "2 h 03 min");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_767_225_600_000 + 3_723_000), "2026-01-01 01:02 UTC");
    }
}
