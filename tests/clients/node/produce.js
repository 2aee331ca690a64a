'use strict'
// Usage: node produce.js BOOTSTRAP TOPIC COUNT [none|gzip] [BATCH]
// An idempotent producer (acks -1) sends records 0..COUNT-1 in sends of BATCH records, each with
// header i. Prints one line per partition of each send's result, then {"done": true, ...}.
const { CompressionTypes } = require('kafkajs')
const { client, key, value, line, describeError, run } = require('./common')

const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }

run(async () => {
  const [bootstrap, topic, countArg, codec = 'none', batchArg = '100'] = process.argv.slice(2)
  const count = Number(countArg)
  const batch = Number(batchArg)
  if (!(codec in CODECS)) throw new Error(`unknown codec ${codec}`)
  const producer = client(bootstrap).producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  let acked = 0
  let failed = 0
  try {
    for (let start = 0; start < count; start += batch) {
      const messages = []
      for (let i = start; i < Math.min(count, start + batch); i++) {
        messages.push({ key: key(i), value: value(i), headers: { i: String(i) } })
      }
      try {
        const result = await producer.send({ topic, acks: -1, compression: CODECS[codec], messages })
        for (const r of result) {
          line({ first: start, partition: r.partition, error_code: r.errorCode, base_offset: Number(r.baseOffset) })
        }
        acked += messages.length
      } catch (e) {
        failed += messages.length
        line({ first: start, ...describeError(e) })
      }
    }
  } finally {
    await producer.disconnect()
  }
  line({ done: true, sent: count, acked, failed })
  return failed === 0 ? 0 : 1
})
