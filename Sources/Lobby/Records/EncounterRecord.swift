import BeaconFrames
import Foundation
import LobbyDatabase

/// A row of `encounter`: the latest time `observerId` reported seeing `seenId`.
struct EncounterRecord: SQLRecord {
    static let databaseTableName = "encounter"
    var observerId: Int64
    var seenId: Int64
    var lastSeenAt: Date
    var distance: Double?
    /// Two-way ranging: the observer's filtered RSSI of the player seen, the measured power that
    /// player advertised and the reading's variance (dB²), when the report carried them.
    var rssi: Double?
    var measuredPower: MeasuredPower?
    var rssiVariance: Double?
}

extension EncounterRecord {
    /// The columns in the order ``init(sqlRow:)`` reads them: select exactly these (or `*`, which the
    /// table's definition keeps in this order) when fetching this record.
    static let columns = "observerId, seenId, lastSeenAt, distance, rssi, measuredPower, rssiVariance"

    init(sqlRow row: SQLRow) throws {
        observerId = try row.get(0)
        seenId = try row.get(1)
        lastSeenAt = try row.get(2)
        distance = try row.get(3)
        rssi = try row.get(4)
        measuredPower = try row.get(5)
        rssiVariance = try row.get(6)
    }

    var sqlValues: [SQLValue] {
        [
            observerId.sqlValue,
            seenId.sqlValue,
            lastSeenAt.unixTime.sqlValue,
            distance.sqlValue,
            rssi.sqlValue,
            measuredPower.sqlValue,
            rssiVariance.sqlValue,
        ]
    }
}
