import Minigames
import SensorSamples
import SystemSupport

// The hot answers written directly as JSON (see JSONWriter). Members in byte order of their keys;
// a test checks every one against JSONEncoder's output.

extension PublicProfile: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("firstName", firstName)
            json.member("lastName", lastName)
            json.member("photoURL", photoURL)
            if let radioOffsets { json.member("radioOffsets", radioOffsets) }
            json.member("stats", stats)
            json.member("username", username)
        }
    }
}

extension RadioOffsets: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("pairs", pairs)
            json.member("receive", receive)
            json.member("receiveError", receiveError)
            json.member("solvedAt", solvedAt)
            json.member("transmit", transmit)
            json.member("transmitError", transmitError)
        }
    }
}

extension PlayerStats: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("bestScore", bestScore)
            json.member("gamesDrawn", gamesDrawn)
            json.member("gamesLost", gamesLost)
            json.member("gamesPlayed", gamesPlayed)
            json.member("gamesWon", gamesWon)
            json.member("roundsWon", roundsWon)
            json.member("spanDays", spanDays)
        }
    }
}

extension Invitation: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("createdAt", createdAt)
            json.key("excluded")
            json.array(excluded)
            json.member("expiresAt", expiresAt)
            json.member("id", id)
            json.key("invitees")
            json.array(invitees)
            json.member("inviter", inviter)
            json.member("state", state)
        }
    }
}

extension Invitation.Invitee: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("response", response)
            json.member("username", username)
        }
    }
}

extension ExcludedInvitee: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("reason", reason)
            json.member("username", username)
        }
    }
}

extension LobbyGame: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            if let achievements {
                json.key("achievements")
                json.array(achievements)
            }
            json.member("createdAt", createdAt)
            json.member("finishedAt", finishedAt)
            json.member("id", id)
            json.member("inviter", inviter)
            json.key("participants")
            json.array(participants) { json, name in json.string(name) }
            json.key("rounds")
            json.array(rounds)
            json.member("state", state)
            json.member("winner", winner)
        }
    }
}

extension LobbyGame.Round: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("duration", duration)
            json.member("game", game)
            json.member("n", n)
            json.member("scores", scores)
            json.member("signalTime", signalTime)
            json.member("winner", winner)
        }
    }
}

extension PlannedRound: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("duration", duration)
            json.member("game", game)
            json.member("n", n)
            json.member("signalTime", signalTime)
        }
    }
}

extension EventData: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("achievement", achievement)
            json.member("game", game)
            json.member("measuredPower", measuredPower?.dBm)
            if let participants {
                json.key("participants")
                json.array(participants) { json, name in json.string(name) }
            }
            json.member("persistent", persistent)
            json.member("player", player)
            json.member("response", response)
            json.member("round", round)
            if let rounds {
                json.key("rounds")
                json.array(rounds)
            }
            json.member("rssi", rssi)
            json.member("rssiVariance", rssiVariance)
            json.member("scores", scores)
            json.member("tier", tier)
            json.member("title", title)
            json.member("tournament", tournament)
            json.member("winner", winner)
        }
    }
}

// Recordings as stored with each verified score: written here rather than by JSONEncoder, which
// took 4.8 % of the server's CPU under the mixed load (a Statue recording holds some 4,000
// numbers). EncodingTests holds them to JSONEncoder's sorted-key output.

extension RoundRecording: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("accelerations")
            json.array(accelerations)
            json.member("calibration", calibration)
            json.member("duration", duration)
            json.member("game", game)
            json.key("levels")
            json.array(levels)
            json.member("signal_time", signalTime)
        }
    }
}

extension AccelerationSample: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("t", time)
            json.member("x", x)
            json.member("y", y)
            json.member("z", z)
        }
    }
}

extension LevelSample: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("overruns", overruns)
            json.member("peak_dbfs", peakDBFS)
            json.member("rms_dbfs", rmsDBFS)
            json.member("t", time)
        }
    }
}

extension SensorCalibration: JSONWritable {
    public func write(to json: inout JSONWriter) {
        json.object { json in
            if let accelerometer {
                json.key("accelerometer")
                json.object { json in
                    json.member("device", accelerometer.device)
                    json.member("gravity_ms2", accelerometer.gravity)
                    json.member("gravity_offset_ms2", accelerometer.gravityOffset)
                    json.member("noise_ms2", accelerometer.noise)
                    json.key("rest_ms2")
                    json.array(accelerometer.rest) { json, value in json.double(value) }
                }
            }
            if let microphone {
                json.key("microphone")
                json.object { json in
                    json.member("noise_floor_dbfs", microphone.noiseFloorDBFS)
                    json.member("pcm", microphone.pcm)
                }
            }
        }
    }
}
