import Traces

/// Reads trace files for a command: reports every bad line on standard error and remembers
/// whether any input was bad, so the command can exit 65 after doing what it could.
struct TraceInput {
    private(set) var hadBadData = false

    mutating func read(_ path: String) -> TraceReader.Result? {
        do {
            let result = try TraceReader.read(path: path)
            for issue in result.issues {
                Diagnostics.write("\(issue)\n")
            }
            if !result.issues.isEmpty {
                hadBadData = true
                Diagnostics.warning("\(path): skipped \(result.issues.count) bad line\(result.issues.count == 1 ? "" : "s"), kept \(result.records.count)")
            }
            return result
        } catch {
            Diagnostics.error("\(error)")
            hadBadData = true
            return nil
        }
    }
}
