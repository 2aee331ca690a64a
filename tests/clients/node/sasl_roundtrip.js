'use strict'
// Usage: node sasl_roundtrip.js OPTIONS_JSON TOPIC COUNT [TIMEOUT_MS]
// OPTIONS_JSON holds KafkaJS client options (brokers, sasl, ssl, timeouts, retry) as JSON, merged over the
// defaults below; "ssl": {"caPath": FILE} becomes {"ca": [the PEM text of FILE]} (JSON cannot carry a Buffer).
// A producer sends value-0 .. value-(COUNT-1) to partition 0 of TOPIC, then a consumer in a fresh group reads
// them back. Prints one JSON object a line:
//   {"event": "produced", "count": N}
//   {"event": "record", "offset": O, "value": V}
//   {"done": true, "count": N, "timed_out": bool}
// A failure to connect prints {"stage": "producer" | "consumer", "error": NAME, "message": ...} and exits 3;
// a timeout while consuming exits 2.
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')
const { line, describeError, run } = require('./common')

/** A KafkaJS client from the JSON options; its log lines go to stderr as in common.js. */
function client (options) {
  const { ssl, ...rest } = options
  const level = logLevel[(process.env.MINIBROKER_KAFKAJS_LOG || 'WARN').toUpperCase()] ?? logLevel.WARN
  let tls = ssl
  if (ssl && ssl.caPath) {
    const { caPath, ...other } = ssl
    tls = { ...other, ca: [fs.readFileSync(caPath, 'utf-8')] }
  }
  return new Kafka({
    clientId: 'minibroker-kafkajs-sasl-test',
    connectionTimeout: 5000,
    requestTimeout: 20000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: level,
    logCreator: () => ({ namespace, label, log }) => {
      const { message, ...extra } = log
      process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
    },
    ...rest,
    ssl: tls
  })
}

/** Connects `member` (a producer or consumer); on failure prints the error for `stage` and returns false. */
async function connect (member, stage) {
  try {
    await member.connect()
    return true
  } catch (e) {
    line({ stage, ...describeError(e) })
    return false
  }
}

run(async () => {
  const [optionsArg, topic, countArg, timeoutArg = '30000'] = process.argv.slice(2)
  const count = Number(countArg)
  const kafka = client(JSON.parse(optionsArg))

  const producer = kafka.producer()
  if (!await connect(producer, 'producer')) return 3
  try {
    const messages = []
    for (let i = 0; i < count; i++) messages.push({ value: `value-${i}`, partition: 0 })
    await producer.send({ topic, acks: -1, messages })
  } finally {
    await producer.disconnect()
  }
  line({ event: 'produced', count })

  const consumer = kafka.consumer({ groupId: `sasl-${topic}`, sessionTimeout: 10000, heartbeatInterval: 500,
    maxWaitTimeInMs: 200 })
  if (!await connect(consumer, 'consumer')) return 3
  let received = 0
  let timedOut = false
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    let reached
    const enough = new Promise(resolve => { reached = resolve })
    await consumer.run({
      eachMessage: async ({ message }) => {
        received++
        line({ event: 'record', offset: Number(message.offset), value: message.value.toString() })
        if (received >= count) reached()
      }
    })
    const timeout = new Promise(resolve => setTimeout(() => resolve('timeout'), Number(timeoutArg)))
    timedOut = await Promise.race([enough, timeout]) === 'timeout'
  } finally {
    await consumer.disconnect()
  }
  line({ done: true, count: received, timed_out: timedOut })
  return timedOut ? 2 : 0
})
