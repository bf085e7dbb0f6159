//! What a generated binary runs: pi's flags, config files and modes.
