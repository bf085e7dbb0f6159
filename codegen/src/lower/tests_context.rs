//! Tests of lowering `context:`: the whole `ContextDefinition` spelt out with the runtime's defaults for what
//! the YAML leaves out, `Default::default()` without the section, and the spec's panel names and documented
//! defaults agreeing with the runtime's.

use super::test_support::main_rs_of;

const P: &str = "::pi_runtime::panels::";

#[test]
fn without_a_context_section_the_definition_takes_the_default() {
    let source = main_rs_of("version: 1\nname: a\n");
    assert!(source.contains("context:::core::default::Default::default(),"), "{source}");
}

#[test]
fn a_bare_panels_strategy_spells_out_the_runtimes_defaults() {
    let source = main_rs_of("version: 1\nname: a\ncontext: { strategy: panels }\n");
    let expected = format!(
        "context:{P}ContextDefinition{{strategy:{P}ContextStrategy::Panels,panels:{P}PanelsDefinition{{\
         builtin:{P}BuiltinPanel::ALL.to_vec(),files:vec![],detach:{P}DetachLimits::default(),\
         command_panels:vec![],texts:{P}PanelTexts::default(),\
         max_auto_continuations:{P}DEFAULT_MAX_AUTO_CONTINUATIONS,git_refresh_secs:{P}DEFAULT_GIT_REFRESH_SECS,\
         reinject_system_prompt:::core::option::Option::None,}},}},"
    );
    assert!(source.contains(&expected), "{source}");
    let messages = main_rs_of("version: 1\nname: a\ncontext: { strategy: messages }\n");
    assert!(messages.contains(&format!("strategy:{P}ContextStrategy::Messages,")), "{messages}");
}

#[test]
fn every_context_option_reaches_the_definition() {
    let yaml = "\
version: 1
name: a
context:
  strategy: panels
  panels: [git, todo]
  files: [README.md]
  detach: { chunk_min_messages: 10, keep_min_tokens: 3000 }
  command_panels:
    - { name: Open PRs, command: gh pr list, refresh_secs: 300, timeout: 20 }
    - { name: Disk, command: df -h }
  max_auto_continuations: 0
  git_refresh_secs: 30
  reinject_system_prompt: true
  texts: { timestamp: 'as of {iso_time}', footer: Done. }
";
    let source = main_rs_of(yaml);
    let expected = [
        format!("builtin:vec![{P}BuiltinPanel::Git,{P}BuiltinPanel::Todo],"),
        "files:vec![\"README.md\".to_owned()],".to_owned(),
        format!(
            "detach:{P}DetachLimits{{chunk_min_messages:10usize,keep_min_tokens:3000u64,..{P}DetachLimits::default()}},"
        ),
        format!(
            "{P}CommandPanelDefinition{{name:\"OpenPRs\".to_owned(),command:\"ghprlist\".to_owned(),\
             refresh_secs:300u64,timeout_secs:20u64,}}"
        ),
        format!(
            "{P}CommandPanelDefinition{{name:\"Disk\".to_owned(),command:\"df-h\".to_owned(),\
             refresh_secs:{P}DEFAULT_COMMAND_REFRESH_SECS,timeout_secs:{P}DEFAULT_COMMAND_TIMEOUT_SECS,}}"
        ),
        format!(
            "texts:{P}PanelTexts{{timestamp:\"asof{{iso_time}}\".to_owned(),footer:\"Done.\".to_owned(),\
             ..{P}PanelTexts::default()}},"
        ),
        "max_auto_continuations:0u32,git_refresh_secs:30u64,".to_owned(),
        "reinject_system_prompt:::core::option::Option::Some(true),".to_owned(),
    ];
    for part in expected {
        assert!(source.contains(&part), "expected {part}\n in {source}");
    }
}

#[test]
fn fully_given_limits_and_texts_need_no_struct_update() {
    let yaml = "\
version: 1
name: a
context:
  strategy: panels
  detach: { chunk_min_messages: 1, chunk_min_tokens: 2, keep_min_messages: 3, keep_min_tokens: 4 }
  texts: { header: h, timestamp: '{iso_time}', footer: f, footer_ack: fa, reinjection: r, reinjection_ack: ra }
";
    let source = main_rs_of(yaml);
    let detach = format!(
        "detach:{P}DetachLimits{{chunk_min_messages:1usize,chunk_min_tokens:2u64,keep_min_messages:3usize,\
         keep_min_tokens:4u64,}},"
    );
    assert!(source.contains(&detach), "{source}");
    let texts = format!(
        "texts:{P}PanelTexts{{header:\"h\".to_owned(),timestamp:\"{{iso_time}}\".to_owned(),footer:\"f\".to_owned(),\
         footer_ack:\"fa\".to_owned(),reinjection:\"r\".to_owned(),reinjection_ack:\"ra\".to_owned(),}},"
    );
    assert!(source.contains(&texts), "{source}");
}

/// `BuiltinPanelSpec` mirrors `pi_runtime::panels::BuiltinPanel` (names and variants), and the defaults the
/// spec's doc comments state are the runtime's (the library never links the runtime; the pi-gen binary
/// does, so this test can compare them).
#[cfg(feature = "cli")]
#[test]
fn panel_names_and_documented_defaults_mirror_the_runtime() {
    use crate::spec::BuiltinPanelSpec;
    use pi_runtime::panels::{self, BuiltinPanel};
    let runtime: Vec<(&str, String)> =
        BuiltinPanel::ALL.iter().map(|panel| (panel.name(), format!("{panel:?}"))).collect();
    let spec: Vec<(&str, String)> =
        BuiltinPanelSpec::ALL.iter().map(|panel| (panel.name(), panel.variant().to_owned())).collect();
    assert_eq!(spec, runtime);
    let limits = panels::DetachLimits::default();
    assert_eq!(
        (limits.chunk_min_messages, limits.chunk_min_tokens, limits.keep_min_messages, limits.keep_min_tokens),
        (25, 5000, 25, 7500)
    );
    assert_eq!((panels::DEFAULT_COMMAND_REFRESH_SECS, panels::DEFAULT_COMMAND_TIMEOUT_SECS), (60, 10));
    assert_eq!((panels::DEFAULT_GIT_REFRESH_SECS, panels::DEFAULT_MAX_AUTO_CONTINUATIONS), (120, 3));
    assert!(panels::PanelTexts::default().timestamp.contains("{iso_time}"));
    assert_eq!(panels::ContextDefinition::default().strategy, panels::ContextStrategy::Messages);
}
