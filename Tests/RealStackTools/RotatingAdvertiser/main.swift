// nearplay-rotating-advertiser: advertises a rotating player identity for a few short periods
// through a live radio backend, for the real-stack check `rotating-identities`
// (scripts/real-stack/guest-checks), until the `nearplay` command itself offers rotation.
//
//   nearplay-rotating-advertiser --backend hci|bluez --adapter hciN --period SECONDS --periods N
//
// Writes one JSON line per period to standard output as it goes on the air:
// {"t":UNIX_TIME,"period":INDEX,"major":M,"minor":m}, then exits when the last period ends
// (status 0) or the radio fails (status 1, the sentence on standard error). Each period lasts
// the full SECONDS: the periods are shifted to start when it starts.
import BeaconFrames
import BeaconKeys
import Foundation
import Logging
import Radio

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("nearplay-rotating-advertiser: \(message)\n".utf8))
    exit(64)
}

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard name.hasPrefix("--"), let value = arguments.popFirst() else { fail("usage: --backend hci|bluez --adapter hciN --period SECONDS --periods N") }
    options[String(name.dropFirst(2))] = value
}
guard let backend = options["backend"].flatMap(RadioBackend.init(rawValue:)), [.bluez, .hci].contains(backend) else { fail("--backend hci or bluez") }
guard let seconds = options["period"].flatMap(Int.init), let period = RotationPeriod(seconds: seconds) else { fail("--period SECONDS (1 or more)") }
guard let count = options["periods"].flatMap(Int.init), count >= 1 else { fail("--periods N (1 or more)") }
let uuid = BeaconUUID(options["uuid"] ?? "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .info
    return handler
}

let now = Date().timeIntervalSince1970
// Shifted so that a period starts now (a millisecond in).
let offset = Double(seconds) - now.truncatingRemainder(dividingBy: Double(seconds)) + 0.001
let beacon = RotatingBeacon(uuid: uuid, secret: .random(), period: period, role: .player, clockOffset: offset)
let first = beacon.index(at: Date())
let advertiser = RadioSelection(backend: backend, adapter: options["adapter"]).makeAdvertiser()

let source = beacon.payloads(onRotate: { index in
    guard index < first + Int64(count) else { return }
    let (major, minor) = beacon.identity(period: index)
    let line = #"{"t":\#(String(format: "%.3f", Date().timeIntervalSince1970)),"period":\#(index - first),"major":\#(major),"minor":\#(minor)}"#
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
})
// The first `count` payloads, then the end: the advertiser is cancelled when the next period begins.
let (limited, feed) = AsyncStream<AdvertisingPayload>.makeStream()
let advertising = Task { try await advertiser.advertise(rotating: limited) }
_ = Task {
    var sent = 0
    for await payload in source {
        if sent == count {
            advertising.cancel()
            break
        }
        feed.yield(payload)
        sent += 1
    }
}
do {
    try await advertising.value
    exit(0)
} catch {
    FileHandle.standardError.write(Data("nearplay-rotating-advertiser: \(error)\n".utf8))
    exit(1)
}
