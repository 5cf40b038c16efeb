// Queries a SA-MP server with npm samp-query (i, r, then d) and prints its result as
// one JSON object: {"error": ...} or the library's response. NODE_PATH must hold the
// module. Usage: node samp_query.js HOST PORT. Used by crates/ogp-cli/tests/all/interop_samp.rs.
const query = require('samp-query')
const [host, port] = process.argv.slice(2)
query({ host, port: Number(port), timeout: 2000 }, (error, response) => {
  process.stdout.write(JSON.stringify(error ? { error: String(error) } : response) + '\n')
})
