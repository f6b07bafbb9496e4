'use strict';
// The Node.js gRPC client (npm rocketmq-client-nodejs, pinned in package-lock.json) through a
// RocketMQ 5.x Proxy in cluster mode (tests/interop/run_proxy.sh).
//
//   node client.js <proxy host:port> <normal topic> <fifo topic> <normal group> <fifo group> <n>
//
// Prints "RESULT pass|fail <check>" lines (one check each in the suite): n NORMAL messages sent
// with the Producer and all received with a SimpleConsumer, then n FIFO messages in 3 message
// groups, received in send order per group. Like the other clients it first prints the Proxy's
// route answer for both topics as normalized "ROUTE ..." lines (a raw QueryRoute through the
// package's generated stubs; the Proxy's own address becomes "proxy"), which the suite compares
// between the two NameServers. The client's log goes to stderr (its default
// egg-logger file, shared by the three clients, is closed by the first one shut down).
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');
const grpc = require('@grpc/grpc-js');
const { randomUUID } = require('node:crypto');
const pbDef = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');
const pbService = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_pb');
const { MessagingServiceClient } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_grpc_pb');

const [endpoint, normalTopic, fifoTopic, normalGroup, fifoGroup, nArg] = process.argv.slice(2);
const n = Number(nArg);
const deadline = Date.now() + 90000;

function result(ok, what) {
  console.log(`RESULT ${ok ? 'pass' : 'fail'} ${what}`);
}

async function sendAll(producer, topic, items) {
  const sent = [];
  for (const { body, group } of items) {
    const msg = { topic, body: Buffer.from(body) };
    if (group) {
      msg.messageGroup = group;
    } else {
      msg.tag = 'it';
      msg.keys = [ `k-${body}` ];
    }
    try {
      await producer.send(msg);
      sent.push(body);
    } catch (err) {
      console.error(`send ${body} failed: ${err}`);
    }
  }
  return sent;
}

async function receiveAll(consumer, expected) {
  const got = [];
  const missing = new Set(expected);
  while (missing.size > 0 && Date.now() < deadline) {
    const batch = await consumer.receive(16, 30000);
    for (const m of batch) {
      const body = m.body.toString();
      got.push(body);
      missing.delete(body);
      await consumer.ack(m);
    }
  }
  return got;
}

function enumName(e, v) {
  return Object.keys(e).find(k => e[k] === v) || String(v);
}

function queryRoute(client, topic) {
  const [ host, port ] = [ endpoint.slice(0, endpoint.lastIndexOf(':')), Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)) ];
  const req = new pbService.QueryRouteRequest()
    .setTopic(new pbDef.Resource().setName(topic))
    .setEndpoints(new pbDef.Endpoints().setScheme(pbDef.AddressScheme.IPV4)
      .setAddressesList([ new pbDef.Address().setHost(host).setPort(port) ]));
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', `it-node-raw-${randomUUID()}`);
  md.set('x-mq-language', 'NODE_JS');
  md.set('x-mq-protocol', 'v2');
  md.set('x-mq-client-version', '1.0.8');
  md.set('x-mq-request-id', randomUUID());
  return new Promise((resolve, reject) => {
    client.queryRoute(req, md, { deadline: Date.now() + 10000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

async function printRoutes(topics) {
  const client = new MessagingServiceClient(endpoint, grpc.credentials.createInsecure());
  try {
    for (const topic of topics) {
      const res = await queryRoute(client, topic);
      const code = enumName(pbDef.Code, res.getStatus().getCode());
      const queues = res.getMessageQueuesList();
      console.log(`ROUTE ${topic} status=${code} queues=${queues.length}`);
      const lines = queues.map(q => {
        const b = q.getBroker();
        const addrs = b.getEndpoints().getAddressesList().map(a => `${a.getHost()}:${a.getPort()}`)
          .map(a => (a === endpoint ? 'proxy' : a)).sort();
        const types = q.getAcceptMessageTypesList().map(t => enumName(pbDef.MessageType, t)).sort();
        // The Java and Python clients print the scheme as "IPv4" (the proto's own spelling).
        const scheme = enumName(pbDef.AddressScheme, b.getEndpoints().getScheme()).replace('IPV', 'IPv');
        return `ROUTE ${topic} queue=${q.getId()} perm=${enumName(pbDef.Permission, q.getPermission())} ` +
          `broker=${b.getName()} brokerId=${b.getId()} endpoints=${scheme}/${addrs.join(',')} accepts=${types.join(',')}`;
      }).sort();
      lines.forEach(l => console.log(l));
      result(code === 'OK' && queues.length > 0,
        `QueryRoute ${topic} answers OK with queues (got ${code}, ${queues.length} queues)`);
    }
  } finally {
    client.close();
  }
}

// rocketmq-client-nodejs 1.0.8's BaseClient.startup() waits for the first settings command only
// after it fetched its topics' routes; a settings command that arrives during that fetch (a
// loaded machine) finds no one waiting, and startup() never returns. A client whose startup has
// not returned within 20 s is dropped and a new one made, up to three times.
async function startClient(make, what) {
  for (let attempt = 1; ; attempt++) {
    const c = make();
    let timer;
    const stalled = new Promise(resolve => { timer = setTimeout(() => resolve('stalled'), 20000); });
    const outcome = await Promise.race([ c.startup().then(() => 'started'), stalled ]);
    clearTimeout(timer);
    if (outcome === 'started') return c;
    console.error(`[warn] ${what}: startup attempt ${attempt} stalled (the client missed its first ` +
      'settings command)');
    const gone = new Promise(resolve => setTimeout(resolve, 5000));
    await Promise.race([ c.shutdown().catch(() => {}), gone ]);
    if (attempt === 3) throw new Error(`${what}: startup stalled three times`);
  }
}

async function main() {
  await printRoutes([ normalTopic, fifoTopic ]);
  const log = (level) => (...args) => console.error(`[${level}]`, ...args);
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: () => {} };
  const base = { endpoints: endpoint, namespace: '', requestTimeout: 10000, logger };
  const normalConsumer = await startClient(() => new SimpleConsumer({ ...base, consumerGroup: normalGroup,
    awaitDuration: 2000, subscriptions: new Map([[ normalTopic, '*' ]]) }), 'normal consumer');
  const fifoConsumer = await startClient(() => new SimpleConsumer({ ...base, consumerGroup: fifoGroup,
    awaitDuration: 2000, subscriptions: new Map([[ fifoTopic, '*' ]]) }), 'FIFO consumer');
  const producer = await startClient(() => new Producer({ ...base, topics: [ normalTopic, fifoTopic ] }),
    'producer');
  try {
    const bodies = Array.from({ length: n }, (_, i) => `node-normal-${i}`);
    let sent = await sendAll(producer, normalTopic, bodies.map(body => ({ body })));
    result(sent.length === n, `producer sends ${n} NORMAL messages to ${normalTopic} (${sent.length} ok)`);
    let got = await receiveAll(normalConsumer, sent);
    let missing = sent.filter(b => !got.includes(b));
    result(missing.length === 0,
      `simple consumer ${normalGroup} receives every NORMAL body (${got.length} received, missing [${missing}])`);
    const unexpected = got.filter(b => !bodies.includes(b));
    result(unexpected.length === 0, `no NORMAL body that was not sent ([${unexpected}])`);

    const groups = [ 'g0', 'g1', 'g2' ];
    const fifo = Array.from({ length: n }, (_, i) => ({
      body: `node-fifo-${groups[i % 3]}-${Math.floor(i / 3)}`, group: groups[i % 3] }));
    sent = await sendAll(producer, fifoTopic, fifo);
    result(sent.length === n,
      `producer sends ${n} FIFO messages in 3 message groups to ${fifoTopic} (${sent.length} ok)`);
    got = await receiveAll(fifoConsumer, sent);
    missing = sent.filter(b => !got.includes(b));
    result(missing.length === 0,
      `FIFO consumer ${fifoGroup} receives every FIFO body (${got.length} received, missing [${missing}])`);
    const last = new Map();
    const seen = new Set();
    const outOfOrder = [];
    for (const body of got) {
      if (seen.has(body)) continue; // a redelivery: order is about first deliveries
      seen.add(body);
      const [ , , group, seq ] = body.split('-');
      const prev = last.has(group) ? last.get(group) : -1;
      if (Number(seq) !== prev + 1) outOfOrder.push(`${body} after ${group}-${prev}`);
      last.set(group, Number(seq));
    }
    result(outOfOrder.length === 0, `FIFO bodies arrive in send order per message group ([${outOfOrder}])`);
  } finally {
    for (const c of [ producer, normalConsumer, fifoConsumer ]) {
      await c.shutdown().catch(err => console.error(`shutdown: ${err}`));
    }
  }
}

main().then(() => process.exit(0), err => {
  console.error(err);
  process.exit(1);
});
