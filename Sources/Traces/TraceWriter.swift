import BeaconFrames
import Foundation

/// Writes trace v1 text: a header line, then one line per advertisement, keys in the order of
/// DESIGN.md (`t`, `addr`, `rssi`, `ad`, then `truth_m`, `addr_type`, `rx` when known).
public enum TraceWriter {
    /// The header line (no newline). `extra` holds further keys as JSON text values, written after
    /// the three standard ones.
    public static func header(created: Date = Date(), source: String, extra: [(key: String, json: String)] = []) -> String {
        var line = "{\"nearplay_trace\":1,\"created\":" + JSONText.string(ISO8601DateFormatter().string(from: created))
            + ",\"source\":" + JSONText.string(source)
        for (key, json) in extra { line += "," + JSONText.string(key) + ":" + json }
        return line + "}"
    }

    /// One advertisement line (no newline). Advertisements without an RSSI cannot be written
    /// (the format requires one); the caller skips them.
    public static func line(_ advertisement: Advertisement, truthDistance: Double? = nil) -> String? {
        guard let rssi = advertisement.rssi else { return nil }
        var line = "{\"t\":" + JSONText.fixed(advertisement.time, 3)
            + ",\"addr\":\"" + advertisement.address.description + "\""
            + ",\"rssi\":\(rssi)"
            + ",\"ad\":\"" + Hex.encode(advertisement.data) + "\""
        if let truthDistance { line += ",\"truth_m\":" + JSONText.fixed(truthDistance, 3) }
        if let type = advertisement.addressType { line += ",\"addr_type\":\"" + type.rawValue + "\"" }
        if let receiver = advertisement.receiver { line += ",\"rx\":" + JSONText.string(receiver.name) }
        return line + "}"
    }
}
