//! Helpers for the panel source tests: whether a process group still has live members.

use std::time::Duration;

/// The live (not zombie) processes in process group `pgid`, read from `/proc`. A zombie is not counted: it
/// runs nothing, and in a container whose init does not reap, orphans stay zombies (and keep `kill(-pgid, 0)`
/// succeeding) forever.
pub(crate) fn live_group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            // After the command name: state, ppid, pgrp.
            let Some((_, rest)) = stat.rsplit_once(") ") else { return false };
            let mut fields = rest.split(' ');
            let state = fields.next().unwrap_or("Z");
            let pgrp = fields.nth(1).and_then(|field| field.parse::<i32>().ok());
            state != "Z" && pgrp == Some(pgid)
        })
        .collect()
}

/// Waits (up to a generous 10 s) until group `pgid` has no live member; panics naming the survivors.
pub(crate) async fn assert_group_gone(pgid: i32) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let members = live_group_members(pgid);
        if members.is_empty() {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "process group {pgid} still has live members {members:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
