import BeaconFrames
import Radio
import Ranging

extension AirSimulation {
    /// Runs the air up to `seconds` in 10 ms steps, as the hub does (the air skips what a
    /// transmitter missed by more than a moment), feeding every delivery to the pipeline of the
    /// device that listened (`listeners`: listener → index into `pipelines`).
    mutating func feed(for seconds: Double, listeners: [ListenerID: Int], into pipelines: inout [ProximityPipeline]) {
        var events: [ProximityEvent] = []
        for step in 1...Int((seconds * 100).rounded()) {
            advance(to: Double(step) / 100) { delivery in
                guard let index = listeners[delivery.listener] else { return }
                events.removeAll(keepingCapacity: true)
                pipelines[index].feed(Advertisement(time: delivery.time, address: delivery.address, rssi: delivery.rssi, data: delivery.data),
                                      into: &events)
            }
        }
    }
}
