'use strict'
// Usage: node txn.js BOOTSTRAP COMMANDS_JSON
// KafkaJS transactions driven by a list of commands, each {"op": ..., ...}; each prints
// {"op": ..., "ok": true, ...} or {"op": ..., "ok": false, error fields}. A failure does not stop the rest.
//   {"op": "producer", "name", "txn", "timeout"?}   a transactional producer (idempotent, one request in flight),
//                                                   connected (KafkaJS sends InitProducerId on connect)
//   {"op": "begin", "name"}                         producer.transaction()
//   {"op": "send", "name", "topic", "from", "count", "partitions"}
//                                                   transaction.send of records from..from+count-1 (value "v-I",
//                                                   record i to partition i % partitions); {"offsets": [...]}
//   {"op": "sendOffsets", "name", "group", "topic", "offsets": {partition: offset}}
//   {"op": "commit" | "abort", "name"}
//   {"op": "disconnect", "name"}
//   {"op": "consume", "topic", "expect", "readUncommitted"?, "lingerMs"?}
//                                                   a group consumer (new group, fromBeginning) runs until `expect`
//                                                   records arrived, then lingerMs more: {"values": [...]}
//   {"op": "groupOffsets", "group", "topic"}        {"offsets": {partition: offset}}
const { client, line, describeError, run } = require('./common')

run(async () => {
  const [bootstrap, commandsJson] = process.argv.slice(2)
  const kafka = client(bootstrap)
  const producers = {}
  const transactions = {}
  const admin = kafka.admin()
  await admin.connect()

  const ops = {
    async producer ({ name, txn, timeout }) {
      const options = { transactionalId: txn, idempotent: true, maxInFlightRequests: 1 }
      if (timeout) options.transactionTimeout = timeout
      const producer = kafka.producer(options)
      producers[name] = producer
      await producer.connect()
      return {}
    },
    async begin ({ name }) {
      transactions[name] = await producers[name].transaction()
      return {}
    },
    async send ({ name, topic, from, count, partitions }) {
      const messages = []
      for (let i = from; i < from + count; i++) {
        messages.push({ value: `v-${i}`, partition: i % partitions })
      }
      const result = await transactions[name].send({ topic, acks: -1, messages })
      return { offsets: result.map(r => ({ partition: r.partition, error_code: r.errorCode, base_offset: Number(r.baseOffset) })) }
    },
    async sendOffsets ({ name, group, topic, offsets }) {
      const partitions = Object.entries(offsets).map(([partition, offset]) => ({
        partition: Number(partition), offset: String(offset)
      }))
      await transactions[name].sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions }] })
      return {}
    },
    async commit ({ name }) {
      await transactions[name].commit()
      return {}
    },
    async abort ({ name }) {
      await transactions[name].abort()
      return {}
    },
    async disconnect ({ name }) {
      await producers[name].disconnect()
      delete producers[name]
      return {}
    },
    async consume ({ topic, expect, readUncommitted = false, lingerMs = 1000 }) {
      const consumer = kafka.consumer({
        groupId: `txn-reader-${process.pid}-${Date.now()}`,
        readUncommitted,
        maxWaitTimeInMs: 200,
        sessionTimeout: 10000,
        heartbeatInterval: 500
      })
      await consumer.connect()
      const values = []
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: true })
        let reached
        const enough = new Promise(resolve => { reached = resolve })
        await consumer.run({
          autoCommit: false,
          eachMessage: async ({ message }) => {
            values.push(message.value.toString())
            if (values.length >= expect) reached()
          }
        })
        if (expect <= 0) reached()
        const timeout = new Promise(resolve => setTimeout(() => resolve('timeout'), 30000))
        if (await Promise.race([enough, timeout]) === 'timeout') throw new Error(`only ${values.length} records`)
        await new Promise(resolve => setTimeout(resolve, lingerMs))
      } finally {
        await consumer.disconnect()
      }
      return { values }
    },
    async groupOffsets ({ group, topic }) {
      const [result] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
      const offsets = {}
      for (const p of result.partitions) offsets[p.partition] = Number(p.offset)
      return { offsets }
    }
  }

  try {
    for (const command of JSON.parse(commandsJson)) {
      const { op } = command
      try {
        if (!(op in ops)) throw new Error(`unknown operation ${op}`)
        line({ op, ok: true, ...(await ops[op](command)) })
      } catch (e) {
        line({ op, ok: false, ...describeError(e) })
      }
    }
  } finally {
    for (const producer of Object.values(producers)) await producer.disconnect()
    await admin.disconnect()
  }
  return 0
})
