//! The pi release a run reproduces on the wire: 0.73.1 (the default) or the current 1.5.x, whose json and
//! RPC events, messages, system prompt and requests differ (see `docs/compat.md`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which pi release's protocol a run speaks. Chosen per agent (`pi_compat` in the YAML), overridden by
/// `--pi-compat` or the `piCompat` setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum PiCompat {
    /// pi 0.73.1 (`@mariozechner/pi-coding-agent`).
    #[default]
    #[serde(rename = "0.73")]
    V0_73,
    /// pi 1.5.x (`@earendil-works/pi-coding-agent`).
    #[serde(rename = "1.5")]
    V1_5,
}

impl PiCompat {
    /// Every level, oldest first.
    pub const ALL: [PiCompat; 2] = [Self::V0_73, Self::V1_5];

    /// The level's name as the YAML and the flag spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_73 => "0.73",
            Self::V1_5 => "1.5",
        }
    }

    /// True from pi 1.5 on.
    pub fn is_v1_5(self) -> bool {
        self == Self::V1_5
    }
}

impl fmt::Display for PiCompat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A level name that is neither `0.73` nor `1.5`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown pi compatibility level \"{0}\" (expected 0.73 or 1.5)")]
pub struct InvalidPiCompat(pub String);

impl FromStr for PiCompat {
    type Err = InvalidPiCompat;

    /// Accepts `0.73`, `1.5` and the full versions they stand for (`0.73.1`, `1.5.2`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let level = match text {
            "0.73" | "0.73.1" => Self::V0_73,
            _ if text == "1.5" || text.starts_with("1.5.") => Self::V1_5,
            _ => return Err(InvalidPiCompat(text.to_owned())),
        };
        Ok(level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_from_short_and_full_versions() {
        assert_eq!("0.73".parse::<PiCompat>(), Ok(PiCompat::V0_73));
        assert_eq!("0.73.1".parse::<PiCompat>(), Ok(PiCompat::V0_73));
        assert_eq!(" 1.5 ".parse::<PiCompat>(), Ok(PiCompat::V1_5));
        assert_eq!("1.5.2".parse::<PiCompat>(), Ok(PiCompat::V1_5));
        assert_eq!("1.4".parse::<PiCompat>(), Err(InvalidPiCompat("1.4".into())));
        assert_eq!(serde_json::to_string(&PiCompat::V1_5).ok().as_deref(), Some("\"1.5\""));
        assert_eq!(PiCompat::default(), PiCompat::V0_73);
    }
}
