import BeaconFrames
import Ranging
import SystemSupport

/// Proximity events as JSON Lines, exactly as DESIGN.md fixes them: keys in order `t`, `event`,
/// `beacon`, `addr`, then `rssi` (enter, range), `rssi_filtered`, `distance_m`, `distance_lo_m`
/// and `distance_hi_m` (range, when there is a distance), `zone` (range), `truth_m` (range, when
/// the trace had it) and `rx` (when the source names receivers). `t` has three decimals,
/// `rssi_filtered` one, the distances two; an unknown distance is `null`.
public enum EventFormat {
    public static func json(_ event: ProximityEvent, truthDistance: Double? = nil) -> String {
        var json = JSONWriter(escaping: .minimal)
        json.object { json in
            json.key("t")
            json.fixed(event.time, places: 3)
            json.member("event", event.kind.rawValue)
            json.member("beacon", event.identity.description)
            json.member("addr", event.address.description)
            switch event.kind {
            case .enter:
                rssi(event, to: &json)
            case .range:
                rssi(event, to: &json)
                json.key("rssi_filtered")
                if let filtered = event.filteredRSSI { json.fixed(filtered, places: 1) } else { json.null() }
                json.key("distance_m")
                if let distance = event.distance { json.fixed(distance, places: 2) } else { json.null() }
                if event.distance != nil, let interval = event.distanceInterval {
                    json.key("distance_lo_m")
                    json.fixed(interval.lowerBound, places: 2)
                    json.key("distance_hi_m")
                    json.fixed(interval.upperBound, places: 2)
                }
                json.member("zone", (event.zone ?? .unknown).rawValue)
                if let truthDistance {
                    json.key("truth_m")
                    json.shortest(truthDistance)
                }
            case .exit:
                break
            }
            json.member("rx", event.receiver?.name)
        }
        return json.text
    }

    private static func rssi(_ event: ProximityEvent, to json: inout JSONWriter) {
        json.key("rssi")
        if let rssi = event.rssi { json.integer(Int64(rssi)) } else { json.null() }
    }
}
