//! `rnats service` discovering a service this test runs with the rnats library.

mod common;

use common::Rnats;
use futures_util::StreamExt;
use rnats::service::ServiceExt;
use rnats_test_server::NatsServer;

/// Answers each request on `endpoint` with the sum of the comma-separated numbers it holds.
async fn answer_with_sums(mut endpoint: rnats::service::endpoint::Endpoint) {
    while let Some(request) = endpoint.next().await {
        let total: i64 = std::str::from_utf8(&request.message.payload)
            .unwrap_or_default()
            .split(',')
            .filter_map(|n| n.trim().parse::<i64>().ok())
            .sum();
        let _ = request.respond(Ok(total.to_string().into())).await;
    }
}

/// The service `adder` 1.2.3 ("adds numbers") on a runtime of its own, its one endpoint in
/// `group` on `subject`, named `name` (else after its subject), answering with sums. Keep
/// both until the test ends: the runtime drives the service.
fn start_adder(
    url: &str,
    group: &str,
    name: Option<&str>,
    subject: &str,
) -> (tokio::runtime::Runtime, rnats::service::Service) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let service = runtime.block_on(async {
        let client = rnats::connect(url).await.expect("connect");
        let service = client
            .service_builder()
            .description("adds numbers")
            .start("adder", "1.2.3")
            .await
            .expect("service");
        let mut endpoint = service.group(group).endpoint_builder();
        if let Some(name) = name {
            endpoint = endpoint.name(name);
        }
        let sum = endpoint.add(subject).await.expect("endpoint");
        tokio::spawn(answer_with_sums(sum));
        client.flush().await.expect("flush");
        service
    });
    (runtime, service)
}

#[test]
fn service_ls_info_stats_ping() {
    let server = NatsServer::start();
    let url = server.url();
    let (runtime, service) = start_adder(&url, "math", None, "sum");
    let rnats = Rnats::new();
    let s = ["-s", url.as_str(), "--expect", "1"];

    assert_eq!(
        rnats.ok(&[&["req", "math.sum", "1,2,3", "--raw"][..], &s[..2]].concat()),
        "6\n"
    );

    let table = rnats.ok(&[&["service", "ls"][..], &s[..]].concat());
    assert!(table.contains("adder"), "{table}");
    assert!(table.contains("1.2.3"), "{table}");
    assert!(table.contains("adds numbers"), "{table}");

    let info = rnats.json(&[&["service", "info", "adder", "--json"][..], &s[..]].concat());
    assert_eq!(info[0]["endpoints"][0]["subject"], "math.sum");

    // A second endpoint, then only the endpoints a pattern names.
    let _product = runtime.block_on(async {
        service
            .group("math")
            .endpoint_builder()
            .name("product")
            .add("mul")
            .await
            .expect("endpoint")
    });
    let names = |info: &serde_json::Value| -> Vec<String> {
        info[0]["endpoints"]
            .as_array()
            .expect("endpoints")
            .iter()
            .map(|e| e["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let info = rnats.json(&[&["service", "info", "adder", "--json"][..], &s[..]].concat());
    assert_eq!(names(&info), ["math-sum", "product"]);
    let info = rnats.json(
        &[
            &["service", "info", "adder", "--endpoint", "^prod", "--json"][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(names(&info), ["product"]);
    let table = rnats.ok(&[&["service", "info", "adder", "-e", "su."][..], &s[..]].concat());
    assert!(table.contains("math.sum"), "{table}");
    assert!(!table.contains("math.mul"), "{table}");
    let bad = rnats.run(&["service", "info", "adder", "-e", "(", "-s", &url]);
    assert_eq!(bad.status.code(), Some(2), "a usage error");
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("regex parse error"), "{said}");

    let stats = rnats.json(&[&["service", "stats", "adder", "--json"][..], &s[..]].concat());
    assert_eq!(stats[0]["endpoints"][0]["num_requests"], 1);

    let pongs = rnats.json(&[&["service", "ping", "--json"][..], &s[..]].concat());
    assert_eq!(pongs[0]["name"], "adder");

    let line = rnats.fails(&["service", "ping", "nobody", "--wait", "200ms", "-s", &url]);
    assert!(line.contains("no service instance answered"), "{line}");
    drop(service);
    drop(runtime);
}

#[test]
fn service_request_sends_to_the_endpoint_its_info_names() {
    let server = NatsServer::start();
    let url = server.url();
    // The endpoint's subject is not its name: the request must come from the INFO.
    let (runtime, service) = start_adder(&url, "math.v2", Some("sum"), "total");
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let run = |args: &[&str]| rnats.ok(&[args, &s[..]].concat());

    assert_eq!(
        run(&["service", "request", "adder", "sum", "1,2,3", "--raw"]),
        "6\n"
    );
    // `req`'s flags: templates and counts.
    assert_eq!(
        run(&[
            "service",
            "req",
            "adder",
            "sum",
            "{{Count}},10",
            "--count",
            "2",
            "--raw",
        ]),
        "11\n12\n"
    );
    // natscli's --translate: the reply's body through a command.
    assert_eq!(
        run(&[
            "service",
            "request",
            "adder",
            "sum",
            "1,2",
            "--raw",
            "--translate",
            "sed s/^/sum=/",
        ]),
        "sum=3\n"
    );
    // No body and standard input piped: the input is the body.
    let out = rnats.run_with_input(
        &[&["service", "request", "adder", "sum", "--raw"][..], &s[..]].concat(),
        b"4,5",
    );
    common::assert_success(&out, &["service", "request"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "9\n");

    let line = rnats.fails(&[&["service", "request", "adder", "nope"][..], &s[..]].concat());
    assert!(
        line.contains("\"nope\": service \"adder\" has sum"),
        "{line}"
    );
    let line = rnats.fails(
        &[
            &["service", "request", "nobody", "sum", "--wait", "200ms"][..],
            &s[..],
        ]
        .concat(),
    );
    assert!(
        line.contains("no instance of the service answered"),
        "{line}"
    );
    drop(service);
    drop(runtime);
}

#[test]
fn service_serve_runs_an_echo_service_natscli_s_way() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str()];
    let mut serving = rnats.spawn_ready(
        &[
            &[
                "service",
                "serve",
                "demo",
                "-H",
                "Region:eu",
                "--count",
                "2",
            ][..],
            &s[..],
        ]
        .concat(),
        "waiting for requests",
    );
    let info = rnats.json(&[&["service", "info", "demo", "--json"][..], &s[..]].concat());
    assert_eq!(info[0]["endpoints"][0]["name"], "echo", "{info}");
    assert_eq!(info[0]["endpoints"][0]["subject"], "demo.echo", "{info}");
    assert_eq!(info[0]["metadata"]["_nats.client.created.library"], "rnats");

    let reply = rnats.json(
        &[
            &[
                "service", "request", "demo", "echo", "hello", "-H", "Trace:7", "--json",
            ][..],
            &s[..],
        ]
        .concat(),
    );
    assert_eq!(reply["data"], "hello", "{reply}");
    let headers = &reply["headers"];
    assert_eq!(headers["Region"], serde_json::json!(["eu"]), "{reply}");
    assert_eq!(
        headers["Trace"],
        serde_json::json!(["7"]),
        "the request's own"
    );
    assert_eq!(
        headers["Subject"],
        serde_json::json!(["demo.echo"]),
        "{reply}"
    );
    assert!(
        headers["Handler"][0]
            .as_str()
            .is_some_and(|pid| pid.parse::<u32>().is_ok())
    );
    // natscli's custom stats: the bytes of the request bodies echoed so far.
    let stats = rnats.json(&[&["service", "stats", "demo", "--json"][..], &s[..]].concat());
    assert_eq!(
        stats[0]["endpoints"][0]["data"]["total_payload"], 5,
        "{stats}"
    );
    assert_eq!(
        rnats.ok(&[
            &["service", "request", "demo", "echo", "again", "--raw"][..],
            &s[..]
        ]
        .concat()),
        "again\n"
    );
    // `--count 2`: it stops after two answers.
    let out = serving.finish_within(std::time::Duration::from_secs(30));
    common::assert_success(&out, &["service", "serve"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Handling request on subject demo.echo"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn service_serve_stops_at_a_ctrl_c_and_leaves_the_service() {
    let server = NatsServer::start();
    let url = server.url();
    let rnats = Rnats::new();
    let s = ["-s", url.as_str(), "--expect", "1"];
    let mut serving = rnats.spawn_ready(
        &[&["service", "serve", "demo"][..], &s[..2]].concat(),
        "waiting for requests",
    );
    let listed = rnats.ok(&[&["service", "ls"][..], &s[..]].concat());
    assert!(listed.contains("demo"), "{listed}");
    serving.interrupt();
    let out = serving.finish_within(std::time::Duration::from_secs(30));
    common::assert_success(&out, &["service", "serve"]);
    // Stopped: nothing answers for it any more.
    let listed = rnats.ok(&[&["service", "ls", "--wait", "300ms"][..], &s[..2]].concat());
    assert!(!listed.contains("demo"), "{listed}");
}
