//! `rnats service` discovering a service this test runs with the rnats library.

mod common;

use common::Rnats;
use futures_util::StreamExt;
use rnats::service::ServiceExt;
use rnats_test_server::NatsServer;

#[test]
fn service_ls_info_stats_ping() {
    let server = NatsServer::start();
    let url = server.url();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let service = runtime.block_on(async {
        let client = rnats::connect(url.as_str()).await.expect("connect");
        let service = client
            .service_builder()
            .description("adds numbers")
            .start("adder", "1.2.3")
            .await
            .expect("service");
        let mut sum = service
            .group("math")
            .endpoint("sum")
            .await
            .expect("endpoint");
        tokio::spawn(async move {
            while let Some(request) = sum.next().await {
                let total: i64 = std::str::from_utf8(&request.message.payload)
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|n| n.trim().parse::<i64>().ok())
                    .sum();
                let _ = request.respond(Ok(total.to_string().into())).await;
            }
        });
        client.flush().await.expect("flush");
        service
    });
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

    let stats = rnats.json(&[&["service", "stats", "adder", "--json"][..], &s[..]].concat());
    assert_eq!(stats[0]["endpoints"][0]["num_requests"], 1);

    let pongs = rnats.json(&[&["service", "ping", "--json"][..], &s[..]].concat());
    assert_eq!(pongs[0]["name"], "adder");

    let line = rnats.fails(&["service", "ping", "nobody", "--wait", "200ms", "-s", &url]);
    assert!(line.contains("no service instance answered"), "{line}");
    drop(service);
    drop(runtime);
}
