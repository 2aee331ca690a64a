'use strict'
// Usage: node group_consume.js BOOTSTRAP TOPIC GROUP EXPECT [LINGER_MS] [TIMEOUT_MS]
// A KafkaJS consumer in group GROUP subscribes to TOPIC (fromBeginning) and runs eachMessage until EXPECT
// records arrived, keeps running LINGER_MS more (to catch redeliveries), commits the next offset of every
// partition it read, and disconnects (leaving the group). Prints, one JSON object a line:
//   {"event": "group_join", "ms_from_connect", "ms_from_run", "duration", "member_id", "leader_id",
//    "is_leader", "protocol", "assignment": {topic: [partitions]}}   (KafkaJS's GROUP_JOIN instrumentation event)
//   {"event": "record", "partition", "offset", "value"}
//   {"event": "committed", "offsets": {partition: offset}}
//   {"done": true, "count": N, "timed_out": bool}
// Exits 2 on timeout.
const { client, line, run } = require('./common')

run(async () => {
  const [bootstrap, topic, groupId, expectArg, lingerArg = '0', timeoutArg = '60000'] = process.argv.slice(2)
  const expect = Number(expectArg)
  const linger = Number(lingerArg)
  const consumer = client(bootstrap).consumer({
    groupId,
    sessionTimeout: 10000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200
  })
  let runAt = null
  const connectAt = Date.now()
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const now = Date.now()
    line({
      event: 'group_join',
      ms_from_connect: now - connectAt,
      ms_from_run: runAt === null ? null : now - runAt,
      duration: payload.duration,
      member_id: payload.memberId,
      leader_id: payload.leaderId,
      is_leader: payload.isLeader,
      protocol: payload.groupProtocol,
      assignment: payload.memberAssignment
    })
  })
  await consumer.connect()
  let count = 0
  const next = {}
  let timedOut = false
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    let reached
    const enough = new Promise(resolve => { reached = resolve })
    runAt = Date.now()
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        count++
        next[partition] = Number(message.offset) + 1
        line({ event: 'record', partition, offset: Number(message.offset), value: message.value.toString() })
        if (count >= expect) reached()
      }
    })
    if (expect <= 0) reached()
    const timeout = new Promise(resolve => setTimeout(() => resolve('timeout'), Number(timeoutArg)))
    if (await Promise.race([enough, timeout]) === 'timeout') {
      timedOut = true
    } else {
      await new Promise(resolve => setTimeout(resolve, linger))
      const offsets = Object.entries(next).map(([partition, offset]) => ({
        topic, partition: Number(partition), offset: String(offset)
      }))
      if (offsets.length > 0) await consumer.commitOffsets(offsets)
      line({ event: 'committed', offsets: next })
    }
  } finally {
    await consumer.disconnect()
  }
  line({ done: true, count, timed_out: timedOut })
  return timedOut ? 2 : 0
})
