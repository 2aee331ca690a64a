'use strict'
// Usage: node admin.js BOOTSTRAP COMMANDS_JSON
// COMMANDS_JSON is a list of {"op": admin method name, "args": [arguments]}; each runs in order on one
// KafkaJS admin client and prints {"op": ..., "ok": true, "result": ...} or {"op": ..., "ok": false, error...}.
// A failing command does not stop the following ones.
const { client, line, describeError, run } = require('./common')

run(async () => {
  const [bootstrap, commandsJson] = process.argv.slice(2)
  const admin = client(bootstrap).admin()
  await admin.connect()
  try {
    for (const { op, args = [] } of JSON.parse(commandsJson)) {
      try {
        if (typeof admin[op] !== 'function') throw new Error(`unknown admin operation ${op}`)
        const result = await admin[op](...args)
        line({ op, ok: true, result: result === undefined ? null : result })
      } catch (e) {
        line({ op, ok: false, ...describeError(e) })
      }
    }
  } finally {
    await admin.disconnect()
  }
  return 0
})
