'use strict';
// The Node.js side of tests/interop/run_clients.sh: an ali-ons producer and push consumer that
// find their broker only through the NameServer under test.
//
//   node client.js <namesrv host:port> <topic> <n> <brokerName> <brokerAddr> <cluster>
//
// Prints one line per check, "RESULT pass <what>" or "RESULT fail <what>", and exits 0 only
// when every check passed. Client warnings and errors go to stderr.
//
// ali-ons is pointed at the NameServer with its `nameSrv` option: without it, it asks
// Aliyun's HTTP address service (`onsAddr`) for the NameServer list. Its constructor insists
// on an `httpclient` even then; the one given here throws, so any HTTP lookup would fail the
// run. No accessKey/secretKey is given, so it signs nothing (the broker has no ACL).
// ali-ons sends JSON headers with version 121 (V3_4_9), so it gets the legacy route body with
// bare integer brokerAddrs keys, which it reads with the lenient JSON2 parser.

const { Producer, Consumer, Message } = require('ali-ons');
const MessageDecoder = require('ali-ons/lib/message/message_decoder');

const [namesrv, topic, nArg, brokerName, brokerAddr, cluster] = process.argv.slice(2);
const n = Number(nArg);
if (!namesrv || !topic || !(n > 0) || !brokerName || !brokerAddr || !cluster) {
  console.error('usage: node client.js <namesrv> <topic> <n> <brokerName> <brokerAddr> <cluster>');
  process.exit(2);
}

let failures = 0;
function result(ok, what) {
  if (!ok) failures++;
  console.log(`RESULT ${ok ? 'pass' : 'fail'} ${what}`);
}

// Every wait below is bounded; this is the backstop for a client call that hangs.
const backstop = setTimeout(() => {
  result(false, 'whole Node run finished within 90 s');
  process.exit(1);
}, 90000);

const rawRoutes = new Map(); // topic -> raw route body, as ali-ons logs it on its default-topic path
function stamp() {
  return new Date().toISOString().slice(11, 23);
}
const logger = {
  info(fmt, ...args) {
    if (typeof fmt === 'string' && fmt.includes('RouteInfoFromNameServer: %s')) {
      rawRoutes.set(args[0], String(args[1]));
    }
  },
  debug() {},
  warn(...args) {
    console.error(stamp(), 'WARN', ...args);
  },
  error(...args) {
    console.error(stamp(), 'ERROR', ...args);
  },
};
const httpclient = {
  request(url) {
    throw new Error(`ali-ons tried an HTTP name-server lookup (${url}) although nameSrv is set`);
  },
};
const common = { nameSrv: namesrv, httpclient, logger };
const runId = `${Date.now()}`;

function checkRoute(what, route) {
  const bds = (route && route.brokerDatas) || [];
  const qds = (route && route.queueDatas) || [];
  const bd = bds[0] || {};
  const addrs = bd.brokerAddrs || {};
  result(bds.length === 1 && bd.brokerName === brokerName && bd.cluster === cluster &&
    Object.keys(addrs).length === 1 && addrs['0'] === brokerAddr,
  `${what}: brokerAddrs {0:${brokerAddr}} of broker ${brokerName} in cluster ${cluster} ` +
    `(got ${JSON.stringify(bds)})`);
  const qd = qds[0] || {};
  result(qds.length === 1 && qd.brokerName === brokerName && qd.writeQueueNums > 0 && (qd.perm & 2) !== 0,
    `${what}: one writable queueData of broker ${brokerName} (got ${JSON.stringify(qds)})`);
  return qd.writeQueueNums || 0;
}

async function main() {
  const producer = new Producer(Object.assign({
    producerGroup: `node_it_producer_${runId}`,
    instanceName: 'node_it_producer',
    sendMsgTimeout: 5000,
  }, common));
  producer.on('error', err => console.error(stamp(), 'ERROR producer', err));
  await producer.ready();
  const api = producer._mqClient; // ali-ons' MQClientAPI, which owns the NameServer calls

  // 1. The topic was created on the broker just before this run (ali-ons does not create
  // topics through TBW102: its producer gives up when the topic's route is 17). Wait until
  // the broker's registration of it reached the NameServer.
  let route = null;
  let lastErr = null;
  const deadline = Date.now() + 20000;
  while (!route && Date.now() < deadline) {
    try {
      route = await api.getTopicRouteInfoFromNameServer(topic, 3000);
    } catch (err) {
      lastErr = err;
      await new Promise(r => setTimeout(r, 300));
    }
  }
  if (!route) {
    result(false, `route of ${topic} found through the NameServer within 20 s (${lastErr && lastErr.message})`);
    throw new Error('no route, giving up');
  }
  const count = checkRoute(`route of ${topic}`, route);

  // 2. The raw route body: ali-ons logs it only on its "default topic" path, which parses
  // it the same way (JSON2).
  const again = await api.getDefaultTopicRouteInfoFromNameServer(topic, 3000);
  const raw = rawRoutes.get(topic) || '';
  result(raw.includes(`"brokerAddrs":{0:"${brokerAddr}"}`),
    `route body for a version-121 client has bare integer brokerAddrs keys (got ${raw})`);
  checkRoute(`route of ${topic} (second query)`, again);

  // 3. Producer.
  const sent = new Set();
  const queuesUsed = new Set();
  let sendOK = 0;
  for (let i = 0; i < n; i++) {
    const body = `node-body-${runId}-${String(i).padStart(3, '0')}`;
    try {
      const res = await producer.send(new Message(topic, 'TagA', body));
      const mq = res.messageQueue || {};
      // msgId is the broker's offset message id: its store address and commit-log offset.
      const stored = res.msgId ? MessageDecoder.decodeMessageId(res.msgId).address : '';
      if (res.sendStatus === 'SEND_OK' && mq.brokerName === brokerName && mq.topic === topic && mq.queueId >= 0 &&
        stored === brokerAddr) {
        sent.add(body);
        queuesUsed.add(Number(mq.queueId));
        sendOK++;
      } else {
        result(false, `send ${i + 1} of ${n} went to broker ${brokerName} (${JSON.stringify(res)})`);
      }
    } catch (err) {
      result(false, `send ${i + 1} of ${n} (${err && err.message})`);
    }
  }
  result(sendOK === n, `${sendOK} of ${n} sends succeeded on broker ${brokerName}, message ids naming ${brokerAddr}`);
  result([ ...queuesUsed ].every(q => q < count),
    `every queue id the sends used is below the topic's queue count ${count} (used ${[ ...queuesUsed ]})`);
  const brokerTable = api._brokerAddrTable.get(brokerName) || {};
  result(Object.keys(brokerTable).length === 1 && brokerTable['0'] === brokerAddr,
    `producer's broker table maps ${brokerName} id 0 to ${brokerAddr} (got ${JSON.stringify(brokerTable)})`);

  // 4. Push consumer of a new group, from the first offset.
  const received = new Map();
  let strangers = 0;
  let resolveAll;
  const all = new Promise(r => {
    resolveAll = r;
  });
  const consumer = new Consumer(Object.assign({
    consumerGroup: `node_it_consumer_${runId}`,
    instanceName: 'node_it_consumer',
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  }, common));
  consumer.on('error', err => console.error(stamp(), 'ERROR consumer', err));
  consumer.subscribe(topic, '*', async msg => {
    const body = msg.body.toString();
    if (sent.has(body)) {
      received.set(body, (received.get(body) || 0) + 1);
    } else {
      strangers++;
    }
    if (received.size === sent.size) resolveAll();
  });
  await consumer.ready();
  const timer = new Promise(r => setTimeout(r, 45000));
  await Promise.race([ all, timer ]);
  let dup = 0;
  for (const k of received.values()) dup += k - 1;
  result(received.size === n && sent.size === n,
    `push consumer received all ${n} bodies (got ${received.size} distinct, ${dup} redelivered)`);
  result(strangers === 0, `push consumer received no body that was not sent (got ${strangers})`);

  await consumer.close();
  await producer.close();
}

main().then(() => {
  clearTimeout(backstop);
  process.exit(failures ? 1 : 0);
}, err => {
  result(false, `Node run completed without an exception (${err && err.stack})`);
  process.exit(1);
});
