import BeaconFrames
import Foundation
import Ranging
import SystemSupport

/// How the simulated air behaves.
public struct SimulationParameters: Sendable, Hashable {
    /// Log-distance path-loss exponent of the simulated room.
    public var pathLossExponent: Double = 2.8
    /// Standard deviation of per-packet shadowing and fading in dB.
    public var shadowingSigma: Double = 4.0
    /// Standard deviation in dB of each beacon's own, lasting offset from the model (a wall, a
    /// body, the room's multipath where it stands): drawn once per beacon, so no filter averages
    /// it away. 0 leaves it out (and draws nothing, so traces stay as they were).
    public var siteShadowing: Double = 0
    /// Probability that a packet is lost, 0…1.
    public var packetLoss: Double = 0.1
    /// Random delay added to each advertising event, up to this many seconds (BLE's advDelay is
    /// 0–10 ms).
    public var jitter: Double = 0.01
    /// Packets weaker than this (dBm) are not received.
    public var sensitivity: Double = -100
    public var seed: UInt64 = 1

    public init(pathLossExponent: Double = 2.8, shadowingSigma: Double = 4.0, siteShadowing: Double = 0, packetLoss: Double = 0.1,
                jitter: Double = 0.01, sensitivity: Double = -100, seed: UInt64 = 1) {
        self.pathLossExponent = pathLossExponent
        self.shadowingSigma = shadowingSigma
        self.siteShadowing = siteShadowing
        self.packetLoss = packetLoss
        self.jitter = jitter
        self.sensitivity = sensitivity
        self.seed = seed
    }
}

/// Writes synthetic traces from a scripted walk: what a receiver at the origin would hear.
/// Deterministic for a given script and seed.
public enum Simulator {
    public static func run(_ script: WalkScript, parameters: SimulationParameters) -> (records: [TraceRecord], presence: [PresenceWindow]) {
        var random = SplitMix64(seed: parameters.seed)
        var records: [TraceRecord] = []
        var presence: [PresenceWindow] = []
        for (index, beacon) in script.beacons.enumerated() {
            guard let identity = BeaconIdentity(beacon.beacon), let start = beacon.waypoints.first?[0],
                  let end = beacon.waypoints.last?[0] else { continue }
            presence.append(PresenceWindow(beacon: identity.description, start: start, end: end))
            let address = beacon.address.flatMap { BluetoothAddress($0) }
                ?? BluetoothAddress(0xC0, 0xFF, 0xEE, 0x00, UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index + 1))
            let ad = advertisingData(identity: identity, measuredPower: beacon.measuredPower)
            let lastingOffset = parameters.siteShadowing > 0 ? parameters.siteShadowing * random.nextGaussian() : 0
            // Step by an integer count of intervals: no drift, and no stall at large times.
            let count = ((end - start) / beacon.interval).rounded(.down)
            guard count.isFinite, count >= 0, count <= WalkScript.mostTransmissions else { continue }
            let transmissions = Int(count)
            for k in 0...max(0, transmissions) {
                let sendTime = start + Double(k) * beacon.interval + random.nextDouble() * parameters.jitter
                guard sendTime <= end, let distance = beacon.distance(at: sendTime) else { continue }
                if random.nextDouble() < parameters.packetLoss { continue }
                let mean = PathLoss.rssi(atDistance: distance, measuredPower: Double(beacon.measuredPower), exponent: parameters.pathLossExponent) + lastingOffset
                let rssi = (mean + parameters.shadowingSigma * random.nextGaussian()).rounded()
                guard rssi >= parameters.sensitivity else { continue }
                let reading = Int(min(-1, max(-127, rssi)))
                records.append(TraceRecord(
                    advertisement: Advertisement(time: (sendTime * 1000).rounded() / 1000, address: address,
                                                 addressType: .random, rssi: reading, data: ad),
                    truthDistance: (distance * 1000).rounded() / 1000))
            }
        }
        records.sort { $0.advertisement.time < $1.advertisement.time }
        for i in records.indices { records[i].line = i + 2 }
        return (records, presence)
    }

    /// Advertising data that decodes to `identity` with `measuredPower`.
    public static func advertisingData(identity: BeaconIdentity, measuredPower: Int) -> [UInt8] {
        let power = UInt8(bitPattern: Int8(clamping: measuredPower))
        switch identity {
        case let .iBeacon(uuid, major, minor):
            return IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: Int8(clamping: measuredPower)).advertisingData()
        case let .altBeacon(id1, id2, id3):
            let body: [UInt8] = [0x18, 0x01, 0xBE, 0xAC] + id1.bytes
                + [UInt8(id2 >> 8), UInt8(id2 & 0xFF), UInt8(id3 >> 8), UInt8(id3 & 0xFF), power, 0x00]
            return [0x02, 0x01, 0x06] + ADStructure(type: .manufacturerSpecificData, data: body).bytes
        case let .eddystone(id):
            // Eddystone carries the 0 m power, above the 1 m value.
            let txPower = UInt8(bitPattern: Int8(clamping: measuredPower + EddystoneUID.oneMetreLoss))
            return [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE]
                + ADStructure(type: .serviceData16, data: [0xAA, 0xFE, 0x00, txPower] + id.bytes + [0, 0]).bytes
        }
    }

    /// The trace header for a simulated run, with its parameters and presence windows.
    public static func header(script: WalkScript, parameters: SimulationParameters, presence: [PresenceWindow], created: Date = Date()) -> String {
        TraceWriter.header(created: created, source: "nearplay simulate") { json in
            json.key("seed")
            json.raw(String(parameters.seed))
            json.key("path_loss_exponent")
            json.shortest(parameters.pathLossExponent)
            json.key("shadowing_sigma_db")
            json.shortest(parameters.shadowingSigma)
            json.key("packet_loss")
            json.shortest(parameters.packetLoss)
            json.key("presence")
            json.array(presence) { json, window in
                json.object { json in
                    json.member("beacon", window.beacon)
                    json.key("start")
                    json.shortest(window.start)
                    json.key("end")
                    json.shortest(window.end)
                }
            }
        }
    }
}

