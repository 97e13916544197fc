import BeaconFrames
import Ranging

/// Proximity events as JSON Lines, exactly as DESIGN.md fixes them: keys in order `t`, `event`,
/// `beacon`, `addr`, then `rssi` (enter, range), `rssi_filtered`, `distance_m`, `distance_lo_m`
/// and `distance_hi_m` (range, when there is a distance), `zone` (range), `truth_m` (range, when
/// the trace had it) and `rx` (when the source names receivers). `t` has three decimals,
/// `rssi_filtered` one, the distances two; an unknown distance is `null`.
public enum EventFormat {
    public static func json(_ event: ProximityEvent, truthDistance: Double? = nil) -> String {
        var line = "{\"t\":" + JSONText.fixed(event.time, 3)
            + ",\"event\":\"" + event.kind.rawValue + "\""
            + ",\"beacon\":\"" + event.identity.description + "\""
            + ",\"addr\":\"" + event.address.description + "\""
        switch event.kind {
        case .enter:
            line += ",\"rssi\":" + (event.rssi.map(String.init) ?? "null")
        case .range:
            line += ",\"rssi\":" + (event.rssi.map(String.init) ?? "null")
            line += ",\"rssi_filtered\":" + (event.filteredRSSI.map { JSONText.fixed($0, 1) } ?? "null")
            line += ",\"distance_m\":" + (event.distance.map { JSONText.fixed($0, 2) } ?? "null")
            if event.distance != nil, let interval = event.distanceInterval {
                line += ",\"distance_lo_m\":" + JSONText.fixed(interval.lowerBound, 2)
                    + ",\"distance_hi_m\":" + JSONText.fixed(interval.upperBound, 2)
            }
            line += ",\"zone\":\"" + (event.zone ?? .unknown).rawValue + "\""
            if let truthDistance { line += ",\"truth_m\":" + JSONText.shortest(truthDistance) }
        case .exit:
            break
        }
        if let receiver = event.receiver { line += ",\"rx\":" + JSONText.string(receiver.name) }
        return line + "}"
    }
}
