'use strict'
// Usage: node held_roundtrip.js OPTIONS_JSON TOPIC COUNT [TIMEOUT_MS]
// OPTIONS_JSON holds KafkaJS client options (brokers, ssl, sasl, ...) as JSON, merged over bounded defaults;
// PEM text goes straight into ssl ({"ca": [PEM], "cert": PEM, "key": PEM}: Node's TLS takes strings).
// A producer sends value-0 .. value-(COUNT-1) to partition 0 of TOPIC, a consumer in a fresh group reads them
// back, then both stay connected until stdin closes, so a test can look at the broker's side of the
// connections (the principal of a mutual-TLS client, say). Prints one JSON object a line:
//   {"event": "produced", "offsets": [O, ...]}
//   {"event": "record", "offset": O, "value": V}
//   {"holding": true}                 (then waits for the end of stdin)
//   {"done": true}
// A failure prints {"fatal": true, ...} and exits 1; no records within TIMEOUT_MS prints
// {"timed_out": true, "count": N} and exits 2.
const { Kafka, logLevel } = require('kafkajs')
const { line, run } = require('./common')

/** A KafkaJS client from the JSON options; its log lines go to stderr. */
function client (options) {
  const level = logLevel[(process.env.MINIBROKER_KAFKAJS_LOG || 'WARN').toUpperCase()] ?? logLevel.WARN
  return new Kafka({
    clientId: 'minibroker-kafkajs-held-test',
    connectionTimeout: 5000,
    requestTimeout: 20000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: level,
    logCreator: () => ({ namespace, label, log }) => {
      const { message, ...extra } = log
      process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
    },
    ...options
  })
}

/** Resolves once stdin ends (the test closes it when it is done looking). */
function stdinClosed () {
  return new Promise(resolve => {
    process.stdin.on('end', resolve)
    process.stdin.on('close', resolve)
    process.stdin.resume()
  })
}

run(async () => {
  const [optionsArg, topic, countArg, timeoutArg = '30000'] = process.argv.slice(2)
  const count = Number(countArg)
  const kafka = client(JSON.parse(optionsArg))

  const producer = kafka.producer()
  const consumer = kafka.consumer({ groupId: `held-${topic}`, sessionTimeout: 10000, heartbeatInterval: 500,
    maxWaitTimeInMs: 200 })
  await producer.connect()
  try {
    const messages = []
    for (let i = 0; i < count; i++) messages.push({ value: `value-${i}`, partition: 0 })
    const results = await producer.send({ topic, acks: -1, messages })
    line({ event: 'produced', offsets: results.map(r => Number(r.baseOffset)) })

    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    let received = 0
    let reached
    const enough = new Promise(resolve => { reached = resolve })
    await consumer.run({
      eachMessage: async ({ message }) => {
        received++
        line({ event: 'record', offset: Number(message.offset), value: message.value.toString() })
        if (received >= count) reached()
      }
    })
    let timer
    const timeout = new Promise(resolve => { timer = setTimeout(() => resolve('timeout'), Number(timeoutArg)) })
    const outcome = await Promise.race([enough, timeout])
    clearTimeout(timer)
    if (outcome === 'timeout') {
      line({ timed_out: true, count: received })
      return 2
    }
    line({ holding: true })
    await stdinClosed()
  } finally {
    await consumer.disconnect()
    await producer.disconnect()
  }
  line({ done: true })
  return 0
})
