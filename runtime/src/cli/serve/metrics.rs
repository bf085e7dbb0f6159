//! `GET /metrics`: the server's counters in Prometheus' text format (open sessions, turns, tokens, errors,
//! turn latency).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::protocol::{AgentEvent, AgentMessage, StopReason};

/// Upper bounds (seconds) of the turn-latency histogram's buckets.
const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// Counters shared by every session of the server.
#[derive(Debug, Default)]
pub struct Metrics {
    turns_started: AtomicU64,
    turns_finished: AtomicU64,
    /// Answers that ended with an error.
    model_errors: AtomicU64,
    input_tokens: AtomicU64,
    output_tokens: AtomicU64,
    cache_read_tokens: AtomicU64,
    cache_write_tokens: AtomicU64,
    /// Per bucket of [`LATENCY_BUCKETS`], then the overflow bucket.
    latency_counts: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    /// The sum of the turns' durations, in microseconds.
    latency_sum_micros: AtomicU64,
}

/// What changes over time and is read at scrape time rather than counted.
pub struct Gauges {
    pub sessions_open: usize,
    pub turns_running: usize,
    pub turns_limit: usize,
}

impl Metrics {
    pub fn turn_started(&self) {
        self.turns_started.fetch_add(1, Ordering::Relaxed);
    }

    /// A turn's run ended after `elapsed`.
    pub fn turn_finished(&self, elapsed: Duration) {
        self.turns_finished.fetch_add(1, Ordering::Relaxed);
        let seconds = elapsed.as_secs_f64();
        let bucket = LATENCY_BUCKETS.iter().position(|bound| seconds <= *bound).unwrap_or(LATENCY_BUCKETS.len());
        self.latency_counts[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latency_sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Counts the tokens and errors of a finished answer.
    pub fn observe(&self, event: &AgentEvent) {
        let AgentEvent::MessageEnd { message: AgentMessage::Assistant(answer) } = event else { return };
        let usage = &answer.usage;
        self.input_tokens.fetch_add(usage.input, Ordering::Relaxed);
        self.output_tokens.fetch_add(usage.output, Ordering::Relaxed);
        self.cache_read_tokens.fetch_add(usage.cache_read, Ordering::Relaxed);
        self.cache_write_tokens.fetch_add(usage.cache_write, Ordering::Relaxed);
        if answer.stop_reason == StopReason::Error {
            self.model_errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut text = String::new();
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(String, String)]| {
            let _ = writeln!(text, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(text, "{name}{labels} {value}");
            }
        };
        let plain = |value: u64| vec![(String::new(), value.to_string())];
        metric("pi_serve_sessions_open", "gauge", "Sessions open in this server.", &plain(gauges.sessions_open as u64));
        metric("pi_serve_turns_running", "gauge", "Prompts running now.", &plain(gauges.turns_running as u64));
        metric(
            "pi_serve_turns_limit",
            "gauge",
            "Prompts that may run at once (--max-turns).",
            &plain(gauges.turns_limit as u64),
        );
        metric(
            "pi_serve_turns_started_total",
            "counter",
            "Prompts that started a run.",
            &plain(load(&self.turns_started)),
        );
        metric("pi_serve_turns_finished_total", "counter", "Runs that ended.", &plain(load(&self.turns_finished)));
        metric(
            "pi_serve_model_errors_total",
            "counter",
            "Answers that ended with an error.",
            &plain(load(&self.model_errors)),
        );
        let tokens: Vec<(String, String)> = [
            ("input", &self.input_tokens),
            ("output", &self.output_tokens),
            ("cache_read", &self.cache_read_tokens),
            ("cache_write", &self.cache_write_tokens),
        ]
        .iter()
        .map(|(kind, counter)| (format!("{{kind=\"{kind}\"}}"), load(counter).to_string()))
        .collect();
        metric("pi_serve_tokens_total", "counter", "Tokens the models reported, by kind.", &tokens);
        let mut buckets = Vec::new();
        let mut cumulative = 0;
        for (index, bound) in LATENCY_BUCKETS.iter().enumerate() {
            cumulative += load(&self.latency_counts[index]);
            buckets.push((format!("_bucket{{le=\"{bound}\"}}"), cumulative.to_string()));
        }
        cumulative += load(&self.latency_counts[LATENCY_BUCKETS.len()]);
        buckets.push(("_bucket{le=\"+Inf\"}".to_owned(), cumulative.to_string()));
        let sum = load(&self.latency_sum_micros) as f64 / 1_000_000.0;
        buckets.push(("_sum".to_owned(), sum.to_string()));
        buckets.push(("_count".to_owned(), cumulative.to_string()));
        metric(
            "pi_serve_turn_duration_seconds",
            "histogram",
            "How long runs took, from the prompt to the end.",
            &buckets,
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_fall_into_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.turn_started();
        metrics.turn_finished(Duration::from_millis(3));
        metrics.turn_finished(Duration::from_millis(700));
        let text = metrics.render(&Gauges { sessions_open: 2, turns_running: 0, turns_limit: 8 });
        assert!(text.contains("# TYPE pi_serve_turn_duration_seconds histogram\n"), "{text}");
        assert!(text.contains("pi_serve_turn_duration_seconds_bucket{le=\"0.005\"} 1\n"), "{text}");
        assert!(text.contains("pi_serve_turn_duration_seconds_bucket{le=\"0.5\"} 1\n"), "{text}");
        assert!(text.contains("pi_serve_turn_duration_seconds_bucket{le=\"1\"} 2\n"), "{text}");
        assert!(text.contains("pi_serve_turn_duration_seconds_bucket{le=\"+Inf\"} 2\n"), "{text}");
        assert!(text.contains("pi_serve_turn_duration_seconds_count 2\n"), "{text}");
        assert!(text.contains("pi_serve_sessions_open 2\n"), "{text}");
        assert!(text.contains("pi_serve_turns_started_total 1\n"), "{text}");
    }
}
