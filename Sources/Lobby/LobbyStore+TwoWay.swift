import BeaconFrames
import Foundation
import LobbyDatabase

/// Two-way ranging through the lobby: an encounter report may carry what the reporter read of
/// each player (filtered RSSI, the measured power that player advertises); the lobby keeps it
/// with the encounter and hands it to the player seen as a `peerReading` event, so that player's
/// agent can combine both directions of the pair (see `TwoWayRanging`).
extension LobbyStore {
    /// Readings are optional, but `rssi` and `measuredPower` come together and in range; errors
    /// name the field as `list[index].field`.
    static func validateReading(_ report: EncounterReport, index: Int, list: String = "sightings") throws {
        switch (report.rssi, report.measuredPower) {
        case (nil, nil):
            if report.rssiVariance != nil {
                throw LobbyError.invalid("\(list)[\(index)].rssiVariance", "comes only with rssi and measuredPower.")
            }
            return
        case (let rssi?, let power?):
            guard rssi.isFinite, (-130...20).contains(rssi) else {
                throw LobbyError.invalid("\(list)[\(index)].rssi", "must be dBm between -130 and 20, got \(rssi).")
            }
            guard power.dBm.isFinite, MeasuredPower.frameRange.contains(power.dBm) else {
                throw LobbyError.invalid("\(list)[\(index)].measuredPower", "must be dBm between -128 and 127 (an iBeacon measured power), got \(power.dBm).")
            }
            if let variance = report.rssiVariance, !(variance.isFinite && variance >= 0) {
                throw LobbyError.invalid("\(list)[\(index)].rssiVariance", "must be dB² (0 or more), got \(variance).")
            }
        case (nil, _):
            throw LobbyError.invalid("\(list)[\(index)].rssi", "is missing: a reading gives rssi and measuredPower together.")
        case (_, nil):
            throw LobbyError.invalid("\(list)[\(index)].measuredPower", "is missing: a reading gives rssi and measuredPower together.")
        }
    }

    /// Sends the reading a report carries to the player seen. The caller has checked that
    /// neither blocked the other.
    func deliverReading(_ context: inout WriteContext, reporter: Int64, seen: Int64, _ report: EncounterReport) throws {
        guard let rssi = report.rssi, let power = report.measuredPower,
              let username = try context.db.fetchValue(String.self, "SELECT username FROM player WHERE id = ?", reporter)
        else { return }
        try context.record(.peerReading, for: seen,
                           EventData(player: username, rssi: rssi, measuredPower: power, rssiVariance: report.rssiVariance))
    }
}
