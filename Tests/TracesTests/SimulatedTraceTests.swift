import Foundation
import Testing
import Traces

/// What `nearplay simulate` writes reads back as the walk it simulated.
struct SimulatedTraceTests {
    @Test func theTraceReadsBackAsTheSimulatedWalk() throws {
        let parameters = SimulationParameters(pathLossExponent: 2.8, shadowingSigma: 4, packetLoss: 0.1, seed: 9)
        let (records, presence) = Simulator.run(WalkScript.demo, parameters: parameters)
        let (text, advertisements) = Simulator.trace(WalkScript.demo, parameters: parameters)
        #expect(advertisements == records.count && advertisements > 100)
        #expect(text.hasSuffix("\n") && text.split(separator: "\n").count == advertisements + 1)
        let read = try TraceReader.read(bytes: Array(text.utf8), name: "walk.jsonl")
        #expect(read.issues.isEmpty)
        #expect(read.header.presence == presence)
        #expect(read.records.map(\.truthDistance) == records.map(\.truthDistance))
        #expect(read.records.map(\.advertisement.data) == records.map(\.advertisement.data))
        #expect(read.records.map(\.advertisement.rssi) == records.map(\.advertisement.rssi))
        #expect(zip(read.records, records).allSatisfy { abs($0.advertisement.time - $1.advertisement.time) < 1e-6 })
    }
}
