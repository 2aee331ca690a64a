'use strict'
// Shared by the KafkaJS test programs: a client with bounded timeouts whose log goes to stderr,
// the record contents, and one-JSON-object-per-line output on stdout.
const { Kafka, logLevel } = require('kafkajs')

/** A KafkaJS client for `bootstrap` ("host:port"); its log lines go to stderr. */
function client (bootstrap) {
  const level = logLevel[(process.env.MINIBROKER_KAFKAJS_LOG || 'WARN').toUpperCase()] ?? logLevel.WARN
  return new Kafka({
    clientId: 'minibroker-kafkajs-test',
    brokers: [bootstrap],
    connectionTimeout: 5000,
    requestTimeout: 20000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 },
    logLevel: level,
    logCreator: () => ({ namespace, level, label, log }) => {
      const { message, ...extra } = log
      process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
    }
  })
}

/** Key of record number i (as in tests/integration/test_kafkajs.py). */
const key = i => `key-${i}`

/** Value of record number i. */
const value = i => `value-${i}-` + 'payload'.repeat(10)

/** Prints one JSON object on its own line. */
function line (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

/** The fields of an error worth asserting on, including those of aggregated errors. */
function describeError (e) {
  const out = { error: e.name, message: e.message }
  if (e.type) out.type = e.type
  if (e.code !== undefined) out.code = e.code
  if (Array.isArray(e.errors)) out.errors = e.errors.map(describeError)
  return out
}

/** Runs `main`, exiting 1 on an uncaught failure and 0 otherwise. */
function run (main) {
  main().then(
    code => process.exit(code || 0),
    e => {
      line({ fatal: true, ...describeError(e) })
      process.stderr.write(`${e.stack}\n`)
      process.exit(1)
    }
  )
}

module.exports = { client, key, value, line, describeError, run }
