import BeaconFrames
import Foundation
import SystemSupport

/// Writes trace v1 text: a header line, then one line per advertisement, keys in the order of
/// DESIGN.md (`t`, `addr`, `rssi`, `ad`, then `truth_m`, `addr_type`, `rx` when known).
public enum TraceWriter {
    /// The header line (no newline). `extra` writes further members, after the three standard ones.
    public static func header(created: Date = Date(), source: String, extra: (inout JSONWriter) -> Void = { _ in }) -> String {
        var json = JSONWriter(escaping: .minimal)
        json.object { json in
            json.member("nearplay_trace", 1)
            json.member("created", ISO8601DateFormatter().string(from: created))
            json.member("source", source)
            extra(&json)
        }
        return json.text
    }

    /// One advertisement line (no newline). Advertisements without an RSSI cannot be written
    /// (the format requires one); the caller skips them.
    public static func line(_ advertisement: Advertisement, truthDistance: Double? = nil) -> String? {
        guard let rssi = advertisement.rssi else { return nil }
        var json = JSONWriter(escaping: .minimal)
        json.object { json in
            json.key("t")
            json.fixed(advertisement.time, places: 3)
            json.member("addr", advertisement.address.description)
            json.member("rssi", Int(rssi))
            json.member("ad", Hex.encode(advertisement.data))
            if let truthDistance {
                json.key("truth_m")
                json.fixed(truthDistance, places: 3)
            }
            json.member("addr_type", advertisement.addressType?.rawValue)
            json.member("rx", advertisement.receiver?.name)
        }
        return json.text
    }
}
