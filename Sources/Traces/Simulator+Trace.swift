import Foundation

extension Simulator {
    /// A simulated walk as a trace file: the header (the script, the parameters and the presence
    /// windows) and one line with truth_m per advertisement, each ending in a newline; what
    /// `nearplay simulate` writes. `advertisements` is how many the walk gave.
    public static func trace(_ script: WalkScript, parameters: SimulationParameters,
                             created: Date = Date()) -> (text: String, advertisements: Int) {
        let (records, presence) = run(script, parameters: parameters)
        var text = header(script: script, parameters: parameters, presence: presence, created: created) + "\n"
        for record in records {
            if let line = TraceWriter.line(record.advertisement, truthDistance: record.truthDistance) { text += line + "\n" }
        }
        return (text, records.count)
    }
}
