// Fault soak: bluetoothd (the python-dbusmock BlueZ mock on a private bus) killed with SIGKILL and
// started again, CYCLES times (20 by default), while a scanner and an advertiser share one
// BlueZManager as in the agent, a device is being received 20 times a second (mid-scan) and our
// advertisement is registered (mid-advertisement). For each restart it measures, from the moment
// the new bluetoothd has its adapter, the time until the scanner delivers an advertisement again
// and until our advertisement is registered again; it prints each, the median and the worst, and
// exits 1 if any took longer than 2 s or never came back. Usage:
//   swift run -c release nearplay-bluez-soak [cycles]
import BeaconFrames
import BusTestSupport
import DBus
import Foundation
import Radio
import Synchronization

let cycles = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20
let limit = Duration.seconds(2)
let apple: UInt16 = 0x004C
let beacon = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2, measuredPower: -59)
let ours = IBeacon(uuid: BeaconUUID("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 7, minor: 7, measuredPower: -59)

/// Advertisements the scanner delivered so far.
let received = Atomic<Int>(0)

func seconds(_ duration: Duration) -> Double { duration.inSeconds }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Polls `condition` every 10 ms until it holds (returns the time it took) or 10 s pass (nil).
func timeUntil(from start: ContinuousClock.Instant, _ condition: () async -> Bool) async -> Duration? {
    while ContinuousClock.now - start < .seconds(10) {
        if await condition() { return ContinuousClock.now - start }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return nil
}

let bus = try await PrivateBus()
defer { bus.stop() }
let mock = try await BlueZMock(bus: bus)
try await mock.addAdapter("hci0")
var device = try await mock.addDevice("C0:FF:EE:00:00:01")
let feedingDevice = Mutex<DBusObjectPath>(device)

let manager = BlueZManager(busAddress: bus.address)
let scanner = BlueZScanner(manager: manager)
let advertiser = BlueZAdvertiser(manager: manager)
/// Scans in a task of its own, counting what arrives.
func startScanning(_ scanner: BlueZScanner) -> Task<Void, any Error> {
    Task { try await scanner.scan { _ in received.add(1, ordering: .relaxed) } }
}
let scanning = startScanning(scanner)
let advertising = Task { try await advertiser.advertise(AdvertisingPayload(manufacturerData: [apple: ours.manufacturerData])) }
// The controller hears the device 20 times a second, while bluetoothd is there to tell.
let feeding = Task {
    while !Task.isCancelled {
        _ = try? await mock.receive(feedingDevice.withLock { $0 }, rssi: -60, manufacturerData: [apple: beacon.manufacturerData])
        try? await Task.sleep(for: .milliseconds(50))
    }
}

let warmup = ContinuousClock.now
let started = await timeUntil(from: warmup) {
    guard received.load(ordering: .relaxed) > 0 else { return false }
    return (try? await mock.registeredAdvertisement()) != nil
}
guard started != nil else {
    print("bluez-soak: scanning and advertising did not start against the mock")
    exit(1)
}

var scanRecoveries: [Double] = []
var advertisementRecoveries: [Double] = []
var failures = 0
var outages: [Double] = []
for cycle in 1...cycles {
    // Let it run a little between crashes, so each kill lands mid-scan and mid-advertisement.
    try await Task.sleep(for: .milliseconds(300))
    let killed = ContinuousClock.now
    mock.kill()
    try await mock.start()
    try await mock.addAdapter("hci0")
    device = try await mock.addDevice("C0:FF:EE:00:00:01")
    feedingDevice.withLock { $0 = device }
    let back = ContinuousClock.now
    let before = received.load(ordering: .relaxed)
    async let scanTime = timeUntil(from: back) { received.load(ordering: .relaxed) > before }
    async let advertisementTime = timeUntil(from: back) { (try? await mock.registeredAdvertisement()) != nil }
    let (scan, advertisement) = await (scanTime, advertisementTime)
    let scanText = scan.map { String(format: "%.3f s", seconds($0)) } ?? "never"
    let advertisementText = advertisement.map { String(format: "%.3f s", seconds($0)) } ?? "never"
    let outage = seconds(back - killed) + max(scan.map(seconds) ?? 0, advertisement.map(seconds) ?? 0)
    outages.append(outage)
    print("restart \(cycle): scanning back in \(scanText), advertisement back in \(advertisementText) "
          + String(format: "(%.3f s from the kill, the mock's own start included)", outage))
    if let scan { scanRecoveries.append(seconds(scan)) }
    if let advertisement { advertisementRecoveries.append(seconds(advertisement)) }
    if scan.map({ $0 > limit }) ?? true { failures += 1 }
    if advertisement.map({ $0 > limit }) ?? true { failures += 1 }
}
feeding.cancel()
scanning.cancel()
advertising.cancel()
_ = await scanning.result
_ = await advertising.result

func summary(_ name: String, _ values: [Double]) -> String {
    String(format: "%@: median %.3f s, worst %.3f s (%d of %d came back)", name, median(values), values.max() ?? .nan, values.count, cycles)
}
print("bluez-soak: \(cycles) bluetoothd crashes (SIGKILL) mid-scan and mid-advertisement")
print(summary("scanning", scanRecoveries))
print(summary("advertisement", advertisementRecoveries))
print(summary("from the kill, with the mock's start", outages))
print("over 2 s or never: \(failures)")
exit(failures == 0 ? 0 : 1)
