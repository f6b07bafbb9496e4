'use strict';
// The Node.js gRPC client (npm rocketmq-client-nodejs, pinned in package-lock.json) through a
// RocketMQ 5.x Proxy in cluster mode (tests/interop/run_proxy.sh).
//
//   node client.js <proxy host:port> <normal topic> <fifo topic> <normal group> <fifo group> <n>
//
// Prints "RESULT pass|fail <check>" lines (one check each in the suite): n NORMAL messages sent
// with the Producer and all received with a SimpleConsumer, then n FIFO messages in 3 message
// groups, received in send order per group. The client's log goes to stderr (its default
// egg-logger file, shared by the three clients, is closed by the first one shut down).
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

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

async function main() {
  const log = (level) => (...args) => console.error(`[${level}]`, ...args);
  const logger = { info: log('info'), warn: log('warn'), error: log('error'), debug: () => {} };
  const base = { endpoints: endpoint, namespace: '', requestTimeout: 10000, logger };
  const normalConsumer = new SimpleConsumer({ ...base, consumerGroup: normalGroup, awaitDuration: 2000,
    subscriptions: new Map([[ normalTopic, '*' ]]) });
  const fifoConsumer = new SimpleConsumer({ ...base, consumerGroup: fifoGroup, awaitDuration: 2000,
    subscriptions: new Map([[ fifoTopic, '*' ]]) });
  const producer = new Producer({ ...base, topics: [ normalTopic, fifoTopic ] });
  await normalConsumer.startup();
  await fifoConsumer.startup();
  await producer.startup();
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
