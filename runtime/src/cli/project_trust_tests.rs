//! Tests of project trust: what makes a folder ask, the saved decisions (closest folder wins, other entries
//! kept, pi's file shape), the order of flag, decision and setting.

use std::path::Path;

use serde_json::json;

use super::*;

fn folders() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let (home, agent, project) = (base.join("home"), base.join("agent"), base.join("work").join("project"));
    for dir in [&home, &agent, &project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    (root, home, agent, project)
}

fn stand(project: &Path, home: &Path, agent: &Path, flag: Option<bool>, default: DefaultProjectTrust) -> TrustStanding {
    let mut warnings = Vec::new();
    let standing = standing(project, ".pi", home, &TrustStore::new(agent), flag, default, &mut warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    standing
}

#[test]
fn protected_files_are_the_config_dirs_entries_and_agents_skills_up_the_tree() {
    let (_root, home, _agent, project) = folders();
    assert!(!has_protected_resources(&project, ".pi", &home));
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    std::fs::write(project.join(".pi").join("AGENTS.md"), "not protected").unwrap();
    assert!(!has_protected_resources(&project, ".pi", &home), "a bare config dir asks nothing");
    std::fs::write(project.join(".pi").join("APPEND_SYSTEM.md"), "x").unwrap();
    assert!(has_protected_resources(&project, ".pi", &home));
    assert!(!has_protected_resources(&project, ".coder", &home), "the agent's own config dir name counts");

    let (_root, home, _agent, project) = folders();
    std::fs::create_dir_all(home.join(".agents").join("skills")).unwrap();
    assert!(!has_protected_resources(&home, ".pi", &home), "the user's own ~/.agents/skills is not the project's");
    std::fs::create_dir_all(project.parent().unwrap().join(".agents").join("skills")).unwrap();
    assert!(has_protected_resources(&project, ".pi", &home), ".agents/skills in a folder above counts");
}

#[test]
fn flag_then_saved_decision_then_setting_then_ask() {
    let (_root, home, agent, project) = folders();
    std::fs::create_dir_all(project.join(".pi")).unwrap();
    std::fs::write(project.join(".pi").join("settings.json"), "{}").unwrap();
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Ask), TrustStanding::Ask);
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Always), TrustStanding::Decided(true));
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Never), TrustStanding::Decided(false));
    TrustStore::new(&agent).save(&[(project.parent().unwrap().to_path_buf(), Some(false))]).unwrap();
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Always), TrustStanding::Decided(false));
    TrustStore::new(&agent).save(&[(project.clone(), Some(true))]).unwrap();
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Never), TrustStanding::Decided(true));
    assert_eq!(stand(&project, &home, &agent, Some(false), DefaultProjectTrust::Ask), TrustStanding::Decided(false));
}

#[test]
fn a_folder_without_protected_files_is_trusted_unless_a_decision_says_otherwise() {
    let (_root, home, agent, project) = folders();
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Never), TrustStanding::Decided(true));
    TrustStore::new(&agent).save(&[(project.clone(), Some(false))]).unwrap();
    assert_eq!(stand(&project, &home, &agent, None, DefaultProjectTrust::Always), TrustStanding::Decided(false));
}

#[test]
fn saving_keeps_other_entries_sorts_keys_and_removes_the_child_for_a_parent_choice() {
    let (_root, _home, agent, project) = folders();
    let store = TrustStore::new(&agent);
    std::fs::write(&store.path, "{\"/zzz\": null, \"/elsewhere\": false}").unwrap();
    store.save(&[(project.clone(), Some(true))]).unwrap();
    let parent_choice = trust_choices(&project, false).into_iter().find(|c| c.label.contains("parent")).unwrap();
    store.save(&parent_choice.updates).unwrap();
    let text = std::fs::read_to_string(&store.path).unwrap();
    let parent = project.parent().unwrap().display().to_string();
    let expected = json!({"/elsewhere": false, parent.clone(): true, "/zzz": null});
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
    assert!(text.ends_with("}\n") && text.contains("\n  \""), "pi's two-space layout: {text}");
    let keys: Vec<&str> = text.lines().filter_map(|line| line.split('"').nth(1)).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(store.decision(&project).unwrap(), Some(SavedDecision { path: parent, trusted: true }));
    assert!(!agent.join("trust.json.lock").exists(), "the lock is released");
}

#[test]
fn a_broken_trust_file_is_reported_and_never_overwritten() {
    let (_root, home, agent, project) = folders();
    std::fs::create_dir_all(project.join(".pi").join("skills")).unwrap();
    let store = TrustStore::new(&agent);
    std::fs::write(&store.path, "{\"/a\": true,\n \"/b\": 1}").unwrap();
    let problem = store.save(&[(project.clone(), Some(true))]).unwrap_err();
    assert!(problem.contains("trust.json") && problem.contains("\"/b\""), "{problem}");
    assert_eq!(std::fs::read_to_string(&store.path).unwrap(), "{\"/a\": true,\n \"/b\": 1}");
    std::fs::write(&store.path, "{\"/a\": tru").unwrap();
    let mut warnings = Vec::new();
    let standing = standing(&project, ".pi", &home, &store, None, DefaultProjectTrust::Ask, &mut warnings);
    assert_eq!(standing, TrustStanding::Ask);
    assert!(warnings[0].contains("trust.json:1:"), "{warnings:?}");
}

#[test]
fn choices_offer_folder_parent_and_refusal_and_session_only_ones_when_asked() {
    let (_root, _home, _agent, project) = folders();
    let labels = |session_only| -> Vec<(String, bool, usize)> {
        trust_choices(&project, session_only).into_iter().map(|c| (c.label, c.trusted, c.updates.len())).collect()
    };
    let parent = format!("Trust the parent folder ({})", project.parent().unwrap().display());
    assert_eq!(
        labels(false),
        vec![("Trust this folder".into(), true, 1), (parent.clone(), true, 2), ("Do not trust".into(), false, 1)]
    );
    assert_eq!(labels(true).len(), 5);
    assert_eq!(labels(true)[2], ("Trust for this session only".into(), true, 0));
    assert_eq!(trust_choices(Path::new("/"), false).len(), 2, "the root has no parent");
}
