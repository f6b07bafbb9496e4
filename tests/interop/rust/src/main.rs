//! rustclient: the Rust side of tests/interop/run_rust.sh. A rocketmq-client-rust producer
//! and push consumer that find their broker only through the NameServer under test.
//!
//! It prints one line per check, "RESULT pass <what>" or "RESULT fail <what>", and exits 0
//! only when every check passed. What the client saw, normalized so that two runs against
//! two NameServers can be compared by the calling script, goes to stdout as "SEEN <json>"
//! lines (broker address and topic name replaced by placeholders, maps with sorted keys).
//!
//! What it checks:
//!   - every send of a new topic (created by the broker on the first send through the route
//!     of TBW102, autoCreateTopicEnable) returns SEND_OK on a queue of the expected broker,
//!     and its offset message id names the broker's address;
//!   - the topic's own route, fetched with GET_ROUTEINFO_BY_TOPIC once the broker registered
//!     the topic, has one brokerData {0: broker address} of the expected broker and cluster
//!     and one writable queueData; the producer's publish queues are ids 0..n-1;
//!   - a push consumer of a new group, reading from the first offset, receives every body
//!     that was sent, and nothing else;
//!   - the admin client (feature admin-read) reads the cluster info (GET_BROKER_CLUSTER_INFO)
//!     with the broker under its cluster, and finds the topic in the topic list
//!     (GET_ALL_TOPIC_LIST_FROM_NAMESERVER) and in the cluster's topics (GET_TOPICS_BY_CLUSTER).
//!
//! usage: rustclient NAMESRV TOPIC N BROKER_NAME BROKER_ADDR CLUSTER

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rocketmq_client_rust::{
    ClientConfig, ClientInstanceHandle, ClientRuntime, ClientRuntimeConfig,
    ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus, DefaultMQAdminExt, DefaultMQProducer,
    DefaultMQPushConsumer, MQAdminReadExt, MQAdminTopicInventoryReadExt, MQPushConsumer,
    MessageListenerConcurrently,
};
use rocketmq_model::common::consumer::consume_from_where::ConsumeFromWhere;
use rocketmq_model::common::message::message_ext::MessageExt;
use rocketmq_model::common::message::message_single::Message;
use rocketmq_runtime::{RuntimeConfig, RuntimeOwner};
use serde_json::{json, Value};

static FAILURES: AtomicUsize = AtomicUsize::new(0);

fn result(ok: bool, what: String) {
    if !ok {
        FAILURES.fetch_add(1, Ordering::SeqCst);
    }
    println!("RESULT {} {}", if ok { "pass" } else { "fail" }, what);
}

/// What the client saw, for the calling script to compare across NameServers.
fn seen(what: &str, value: Value) {
    println!("SEEN {} {}", what, sort_keys(value));
}

/// The same JSON with every object's keys in order and every array of strings sorted
/// (serde_json may keep insertion order, and the client's maps and sets are hash maps).
fn sort_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: std::collections::BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sort_keys(v))).collect();
            Value::Object(sorted.into_iter().collect())
        }
        Value::Array(items) => {
            let mut items: Vec<Value> = items.into_iter().map(sort_keys).collect();
            if items.iter().all(Value::is_string) {
                items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
            }
            Value::Array(items)
        }
        other => other,
    }
}

/// Replaces every string equal to one of the given values by its placeholder.
fn replace_strings(value: Value, subst: &[(&str, &str)]) -> Value {
    match value {
        Value::String(s) => match subst.iter().find(|(from, _)| *from == s) {
            Some((_, to)) => Value::String((*to).to_string()),
            None => Value::String(s),
        },
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, replace_strings(v, subst)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| replace_strings(v, subst))
                .collect(),
        ),
        other => other,
    }
}

/// An offset message id is 32 hex digits: the store host's IPv4 address, its port (4 bytes
/// each) and the commit log offset (8 bytes).
fn offset_msg_id_addr(id: &str) -> Option<String> {
    if id.len() != 32 {
        return None;
    }
    let byte = |i: usize| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).ok();
    let b: Vec<u8> = (0..8).map(byte).collect::<Option<Vec<u8>>>()?;
    let port = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
    Some(format!("{}.{}.{}.{}:{}", b[0], b[1], b[2], b[3], port))
}

struct Collector {
    bodies: Arc<Mutex<Vec<String>>>,
}

impl MessageListenerConcurrently for Collector {
    fn consume_message(
        &self,
        msgs: &[&MessageExt],
        _context: &ConsumeConcurrentlyContext,
    ) -> rocketmq_client_rust::ClientResult<ConsumeConcurrentlyStatus> {
        let mut bodies = self.bodies.lock().unwrap();
        for msg in msgs {
            let body = msg
                .body()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            bodies.push(body);
        }
        Ok(ConsumeConcurrentlyStatus::ConsumeSuccess)
    }
}

struct Args {
    namesrv: String,
    topic: String,
    n: usize,
    broker_name: String,
    broker_addr: String,
    cluster: String,
}

fn parse_args() -> Args {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 7 {
        eprintln!("usage: rustclient NAMESRV TOPIC N BROKER_NAME BROKER_ADDR CLUSTER");
        std::process::exit(2);
    }
    Args {
        namesrv: a[1].clone(),
        topic: a[2].clone(),
        n: a[3].parse().expect("N is a number"),
        broker_name: a[4].clone(),
        broker_addr: a[5].clone(),
        cluster: a[6].clone(),
    }
}

fn main() {
    let args = parse_args();
    // Every wait below is bounded; this is the backstop for a client call that hangs.
    let deadline = Duration::from_secs(
        std::env::var("RUSTCLIENT_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    std::thread::spawn(move || {
        std::thread::sleep(deadline);
        println!(
            "RESULT fail whole Rust run finished within {} s",
            deadline.as_secs()
        );
        std::process::exit(1);
    });

    let owner = RuntimeOwner::plan(RuntimeConfig {
        thread_name: "rustclient".to_string(),
        ..Default::default()
    })
    .expect("runtime plan")
    .build()
    .expect("runtime");
    // The client's own log lines go to stderr (the suite keeps them in <label>.log); RUST_LOG,
    // if set, chooses their level.
    let mut telemetry_config = rocketmq_observability::TelemetryBootstrapConfig::default();
    telemetry_config.logging.console.ansi = false;
    if let Ok(Some(filter)) = rocketmq_observability::read_rust_log() {
        telemetry_config.logging.filter = filter;
    }
    let telemetry = rocketmq_observability::install_global(&telemetry_config).expect("telemetry");
    let client_runtime = ClientRuntime::try_new(
        owner.root_context().component("client"),
        ClientRuntimeConfig::default(),
        telemetry.handle(),
    )
    .expect("client runtime");

    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    tokio_rt.block_on(run(&args, client_runtime.clone()));
    tokio_rt.block_on(async {
        let _ = tokio::time::timeout(Duration::from_secs(10), client_runtime.shutdown()).await;
    });
    let failures = FAILURES.load(Ordering::SeqCst);
    eprintln!("rustclient: {failures} failed checks");
    std::process::exit(if failures == 0 { 0 } else { 1 });
}

async fn run(args: &Args, client_runtime: Arc<ClientRuntime>) {
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let subst = [
        (args.broker_addr.as_str(), "<broker>"),
        (args.topic.as_str(), "<topic>"),
    ];

    // 1. Producer: the topic does not exist yet, so the first send goes through the route of
    // TBW102 and the broker creates the topic.
    let mut producer = DefaultMQProducer::builder(client_runtime.clone())
        .producer_group(format!("rust_it_producer_{stamp}"))
        .name_server_addr(args.namesrv.clone())
        .send_msg_timeout(5000)
        .retry_times_when_send_failed(2)
        .build();
    if let Err(e) = producer.start().await {
        result(false, format!("producer started ({e})"));
        return;
    }
    let mut sent = BTreeSet::new();
    let mut queues_used = BTreeSet::new();
    let mut send_ok = 0;
    for i in 0..args.n {
        let body = format!("rust-body-{stamp}-{i:03}");
        let msg = Message::builder()
            .topic(args.topic.as_str())
            .body_slice(body.as_bytes())
            .build_unchecked();
        match producer.send_with_timeout(msg, 5000).await {
            Ok(Some(res)) => {
                let status = format!("{:?}", res.send_status);
                let mq = res.message_queue.as_ref();
                let ok_queue = mq.is_some_and(|q| {
                    q.topic().as_str() == args.topic
                        && q.broker_name().as_str() == args.broker_name
                        && q.queue_id() >= 0
                });
                let addr = res.offset_msg_id.as_deref().and_then(offset_msg_id_addr);
                let ok_addr = addr.as_deref() == Some(args.broker_addr.as_str());
                if status == "SendOk" && ok_queue && ok_addr {
                    send_ok += 1;
                    sent.insert(body);
                    queues_used.insert(mq.unwrap().queue_id());
                } else {
                    result(
                        false,
                        format!(
                            "send {} of {}: SendOk on broker {} at {} (status {status}, queue {mq:?}, offsetMsgId {:?})",
                            i + 1,
                            args.n,
                            args.broker_name,
                            args.broker_addr,
                            res.offset_msg_id
                        ),
                    );
                }
            }
            Ok(None) => result(
                false,
                format!("send {} of {} returned a result (none)", i + 1, args.n),
            ),
            Err(e) => result(false, format!("send {} of {} ({e})", i + 1, args.n)),
        }
    }
    result(
        send_ok == args.n,
        format!(
            "{send_ok} of {} sync sends returned SendOk on broker {}, offset ids naming {}",
            args.n, args.broker_name, args.broker_addr
        ),
    );
    seen(
        "sends",
        json!({"sendOk": send_ok, "queuesUsed": queues_used, "broker": args.broker_name}),
    );

    // 2. The topic's own route, once the broker has registered the topic it created (its next
    // registration, which a send-created topic triggers at once).
    let mut config = ClientConfig::new();
    config.set_namesrv_addr(args.namesrv.clone().into());
    config.set_instance_name(format!("rust_it_route_{stamp}").into());
    let route = match ClientInstanceHandle::get_or_create(&client_runtime, 1, config, None) {
        Err(e) => {
            result(false, format!("route client created ({e})"));
            None
        }
        Ok(handle) => {
            let t0 = Instant::now();
            let mut last = String::new();
            let mut route = None;
            while t0.elapsed() < Duration::from_secs(20) {
                match handle.topic_route(&args.topic, 3000).await {
                    Ok(Some(r)) if !r.queue_datas.is_empty() => {
                        route = Some(r);
                        break;
                    }
                    Ok(other) => last = format!("{other:?}"),
                    Err(e) => last = e.to_string(),
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            if route.is_none() {
                result(
                    false,
                    format!(
                        "route of {} found through the NameServer within 20 s ({last})",
                        args.topic
                    ),
                );
            }
            route
        }
    };
    if let Some(route) = route {
        let v = serde_json::to_value(&route).unwrap_or(Value::Null);
        eprintln!("rustclient: route of {}: {v}", args.topic);
        let bd = &v["brokerDatas"];
        let ok = bd.as_array().is_some_and(|a| a.len() == 1)
            && bd[0]["brokerName"] == args.broker_name.as_str()
            && bd[0]["cluster"] == args.cluster.as_str()
            && bd[0]["brokerAddrs"]
                .as_object()
                .is_some_and(|m| m.len() == 1)
            && bd[0]["brokerAddrs"]["0"] == args.broker_addr.as_str();
        result(
            ok,
            format!(
                "route of {}: client parsed brokerAddrs {{0:{}}} of broker {} in cluster {} (got {bd})",
                args.topic, args.broker_addr, args.broker_name, args.cluster
            ),
        );
        let qd = &v["queueDatas"];
        let ok = qd.as_array().is_some_and(|a| a.len() == 1)
            && qd[0]["brokerName"] == args.broker_name.as_str()
            && qd[0]["writeQueueNums"].as_u64().is_some_and(|n| n > 0)
            && qd[0]["perm"].as_u64().is_some_and(|p| p & 2 != 0);
        result(
            ok,
            format!(
                "route of {}: one writable queueData of broker {} (got {qd})",
                args.topic, args.broker_name
            ),
        );
        seen("route", replace_strings(v, &subst));
    }

    // The producer's view: publish queues of the topic (from the route it holds).
    match producer.fetch_publish_message_queues(&args.topic).await {
        Ok(mqs) => {
            let ids: BTreeSet<i32> = mqs.iter().map(|q| q.queue_id()).collect();
            let ok_names = mqs
                .iter()
                .all(|q| q.broker_name().as_str() == args.broker_name);
            let ok_ids = !ids.is_empty() && ids.iter().copied().eq(0..ids.len() as i32);
            let ok_used = queues_used.is_subset(&ids);
            result(
                ok_names && ok_ids && ok_used,
                format!(
                    "producer publish queues of {}: {} queues of broker {}, ids {ids:?}, the sends used {queues_used:?}",
                    args.topic,
                    mqs.len(),
                    args.broker_name
                ),
            );
            seen("publishQueues", json!({"ids": ids, "count": mqs.len()}));
        }
        Err(e) => result(
            false,
            format!("producer publish queues of {} ({e})", args.topic),
        ),
    }
    producer.shutdown().await;

    // 3. A push consumer of a new group, from the first offset, receives every body.
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let mut consumer = DefaultMQPushConsumer::builder(client_runtime.clone())
        .consumer_group(format!("rust_it_consumer_{stamp}"))
        .name_server_addr(args.namesrv.clone())
        .consume_from_where(ConsumeFromWhere::ConsumeFromFirstOffset)
        .build();
    if let Err(e) = consumer.subscribe(args.topic.as_str(), "*").await {
        result(
            false,
            format!("consumer subscribed to {} ({e})", args.topic),
        );
        return;
    }
    consumer.register_message_listener_concurrently(Collector {
        bodies: bodies.clone(),
    });
    if let Err(e) = consumer.start().await {
        result(false, format!("consumer started ({e})"));
        return;
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(30) {
        let got: BTreeSet<String> = bodies.lock().unwrap().iter().cloned().collect();
        if sent.is_subset(&got) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A little longer, so that a duplicate or a stray message would show.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let received = bodies.lock().unwrap().clone();
    let got: BTreeSet<String> = received.iter().cloned().collect();
    let missing = sent.difference(&got).count();
    let stray = got.difference(&sent).count();
    result(
        missing == 0 && stray == 0 && !sent.is_empty(),
        format!(
            "push consumer received all {} sent bodies in {:.1} s ({} deliveries, {missing} missing, {stray} not sent)",
            sent.len(),
            t0.elapsed().as_secs_f64(),
            received.len()
        ),
    );
    seen(
        "consumed",
        json!({"distinctBodies": got.len(), "missing": missing, "stray": stray}),
    );
    consumer.shutdown().await;

    // 4. The admin client's NameServer reads.
    admin_reads(args, client_runtime, stamp, &subst).await;
}

async fn admin_reads(
    args: &Args,
    client_runtime: Arc<ClientRuntime>,
    stamp: u128,
    subst: &[(&str, &str)],
) {
    let mut admin =
        DefaultMQAdminExt::with_admin_ext_group(client_runtime, format!("rust_it_admin_{stamp}"));
    admin.set_namesrv_addr(args.namesrv.as_str());
    admin
        .client_config_mut()
        .set_instance_name(format!("rust_it_admin_{stamp}").into());
    if let Err(e) = MQAdminReadExt::start(&mut admin).await {
        result(false, format!("admin client started ({e})"));
        return;
    }
    match admin.examine_broker_cluster_info().await {
        Ok(info) => {
            let v = serde_json::to_value(&info).unwrap_or(Value::Null);
            let b = &v["brokerAddrTable"][args.broker_name.as_str()];
            let members = v["clusterAddrTable"][args.cluster.as_str()]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let ok = b["brokerAddrs"]["0"] == args.broker_addr.as_str()
                && b["cluster"] == args.cluster.as_str()
                && members.iter().any(|m| m == args.broker_name.as_str());
            result(
                ok,
                format!(
                    "cluster info: broker {} at {} in cluster {} (got {v})",
                    args.broker_name, args.broker_addr, args.cluster
                ),
            );
            seen("clusterInfo", replace_strings(v, subst));
        }
        Err(e) => result(false, format!("cluster info read ({e})")),
    }
    match admin.fetch_all_topic_list().await {
        Ok(list) => {
            let has = |t: &str| list.topic_list.iter().any(|x| x.as_str() == t);
            result(
                has(&args.topic) && has("TBW102"),
                format!(
                    "topic list of {} topics holds {} and TBW102",
                    list.topic_list.len(),
                    args.topic
                ),
            );
            seen(
                "allTopics",
                json!({"hasTopic": has(&args.topic), "hasTBW102": has("TBW102")}),
            );
        }
        Err(e) => result(false, format!("topic list read ({e})")),
    }
    match admin
        .fetch_topic_inventory(Some(args.cluster.as_str().into()))
        .await
    {
        Ok(list) => {
            let has = |t: &str| list.topic_list.iter().any(|x| x.as_str() == t);
            result(
                has(&args.topic),
                format!(
                    "topics of cluster {} ({}) hold {}",
                    args.cluster,
                    list.topic_list.len(),
                    args.topic
                ),
            );
            seen(
                "clusterTopics",
                json!({"hasTopic": has(&args.topic), "hasTBW102": has("TBW102")}),
            );
        }
        Err(e) => result(
            false,
            format!("topics of cluster {} read ({e})", args.cluster),
        ),
    }
    MQAdminReadExt::shutdown(&mut admin).await;
}
