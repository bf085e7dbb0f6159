//! Model traffic goes through the proxy the environment names (`HTTP_PROXY`, `http_proxy`), and around it
//! for the hosts `NO_PROXY` lists, as pi's does. The "proxy" here is a second mock server: an HTTP proxy is
//! sent the request with the target's whole URL, which the mock serves by its path (and records whole).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn model_requests_go_through_the_environment_proxy_unless_no_proxy_names_the_host() {
    let binary = agent_binary("pi");
    let args = [&MODEL_ARGS[..], &["-p", "hi"]].concat();
    let target = server(json!([{"text": "direct"}])).await;
    let proxy = server(json!([{"text": "via the proxy"}, {"text": "via the proxy again"}])).await;
    let proxy_url = format!("http://{}", proxy.addr());
    let sandbox = Sandbox::new(&target.base_url());

    let proxied = sandbox.run_env(&binary, &args, &[("HTTP_PROXY", &proxy_url), ("NO_PROXY", "")]).await;
    assert!(proxied.status.success(), "{}", stderr(&proxied));
    assert_eq!(stdout(&proxied), "via the proxy\n");
    // A proxy is asked for the target's whole URL.
    assert_eq!(proxy.requests()[0].path, format!("{}/chat/completions", target.base_url()));

    let lower = sandbox.run_env(&binary, &args, &[("http_proxy", &proxy_url), ("NO_PROXY", "")]).await;
    assert_eq!(stdout(&lower), "via the proxy again\n", "{}", stderr(&lower));

    let bypassed = sandbox.run_env(&binary, &args, &[("HTTP_PROXY", &proxy_url), ("NO_PROXY", "127.0.0.1")]).await;
    assert_eq!(stdout(&bypassed), "direct\n", "{}", stderr(&bypassed));
    assert_eq!((target.requests().len(), proxy.requests().len()), (1, 2));
}
