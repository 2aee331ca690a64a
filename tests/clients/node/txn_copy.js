'use strict'
// Usage: node txn_copy.js BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID TOTAL [ABORT_AT] [DIE_AT] [TIMEOUT_MS]
// Exactly-once consume-transform-produce with KafkaJS: a group consumer (read committed, no auto commit, eachBatch
// without auto-resolve) and a transactional producer copy every record of INPUT to OUTPUT (same partition, value
// "copy-" + value, key "partition:offset" of the source) and send the consumed offsets in the same transaction.
// Stops once the group's committed offsets (read at start, then tracked) add up to TOTAL.
// ABORT_AT=K aborts this process's K-th transaction (its batch is not resolved, so it is fetched again); DIE_AT=K
// exits the process (code 3, no disconnect) in the K-th transaction after its records and offsets were sent.
// Prints one JSON object a line: {"event": "committed"|"aborted"|"dying", "txn", "partition", "records", "next"},
// {"done": true, "committed": {partition: offset}}; exits 2 on timeout.
const { client, line, describeError, run } = require('./common')

run(async () => {
  const [bootstrap, input, output, groupId, transactionalId, totalArg, abortArg = '-1', dieArg = '-1',
    timeoutArg = '60000'] = process.argv.slice(2)
  const total = Number(totalArg)
  const abortAt = Number(abortArg)
  const dieAt = Number(dieArg)
  const kafka = client(bootstrap)

  const admin = kafka.admin()
  await admin.connect()
  const committed = {}
  const [start] = await admin.fetchOffsets({ groupId, topics: [input] })
  for (const p of start.partitions) committed[p.partition] = Math.max(0, Number(p.offset))
  await admin.disconnect()
  const sum = () => Object.values(committed).reduce((a, b) => a + b, 0)
  line({ event: 'start', committed: { ...committed } })

  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const consumer = kafka.consumer({
    groupId,
    readUncommitted: false,
    maxWaitTimeInMs: 200,
    heartbeatInterval: 500,
    // a restarted copier waits for the halted one to leave the group: its session timeout in Kafka (this broker
    // waits for the rebalance timeout instead, so keep that short too)
    sessionTimeout: 6000,
    rebalanceTimeout: 10000,
    maxBytesPerPartition: 700 // a few records per batch: several transactions
  })
  await consumer.connect()
  let txn = 0
  let finished
  const done = new Promise(resolve => { finished = resolve })
  if (sum() >= total) finished()
  try {
    await consumer.subscribe({ topics: [input], fromBeginning: true })
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
        if (batch.messages.length === 0) return
        txn++
        const transaction = await producer.transaction()
        const messages = batch.messages.map(m => ({
          key: `${batch.partition}:${m.offset}`, value: 'copy-' + m.value.toString(), partition: batch.partition
        }))
        await transaction.send({ topic: output, acks: -1, messages })
        const next = Number(batch.lastOffset()) + 1
        await transaction.sendOffsets({
          consumerGroupId: groupId,
          topics: [{ topic: input, partitions: [{ partition: batch.partition, offset: String(next) }] }]
        })
        const event = { txn, partition: batch.partition, records: messages.length, next }
        if (txn === dieAt) {
          line({ event: 'dying', ...event })
          process.exit(3)
        }
        if (txn === abortAt) {
          await transaction.abort()
          line({ event: 'aborted', ...event })
          // nothing resolved: the same records are fetched again
          consumer.seek({ topic: input, partition: batch.partition, offset: batch.messages[0].offset })
          return
        }
        await transaction.commit()
        resolveOffset(batch.lastOffset())
        committed[batch.partition] = next
        line({ event: 'committed', ...event })
        await heartbeat()
        if (sum() >= total) finished()
      }
    })
    const timeout = new Promise(resolve => setTimeout(() => resolve('timeout'), Number(timeoutArg)))
    if (await Promise.race([done, timeout]) === 'timeout') {
      line({ event: 'error', error: 'timeout', committed })
      return 2
    }
  } catch (e) {
    line({ event: 'error', ...describeError(e) })
    return 1
  } finally {
    await consumer.disconnect()
    await producer.disconnect()
  }
  line({ done: true, transactions: txn, committed })
  return 0
})
