import GRDB

extension LobbyMigrations {
    /// Statistics, leaderboards, leagues and achievements (issue 11). Everything a board page, a
    /// player's statistics or an achievement check reads is kept up to date inside the transaction
    /// that records a game's result, so that no read scans the results:
    /// - `result`: one row per participant of a finished game, in UTC; a player's days are grouped
    ///   in its zone when read (`result_player_time` serves "this player's last 30 days").
    /// - `playerTotals`, `minigameWins`: counters since registration.
    /// - `boardPoints`: points per board, period and player (`board` is `day`, `week`, `month`,
    ///   `all`, and later `location:ID`, `tournament:ID`), read in rank order through
    ///   `boardPoints_rank`; `boardTally` counts the players at each points value, so a rank is a
    ///   sum over the distinct values above it rather than a count over the players.
    /// - `unlockCount` / `unlockTally`: the same for the number of unlocked players, kept by
    ///   triggers on `unlock` so that every path that unlocks (rewards, deletions) keeps them.
    /// - `league`: each player's tier and group for each week it played.
    /// - `achievement`: one row per tier granted (the primary key makes a second grant impossible).
    /// - `playerSettings`: the optional profile fields `timeZone` (IANA) and `country` (ISO 3166-1
    ///   alpha-2).
    static func registerStatistics(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v3-stats-achievements") { db in
            try db.execute(sql: """
                CREATE TABLE playerSettings (
                    playerId INTEGER PRIMARY KEY REFERENCES player(id),
                    timeZone TEXT CHECK (timeZone IS NULL OR length(timeZone) BETWEEN 1 AND 64),
                    country TEXT CHECK (country IS NULL OR (length(country) = 2 AND country = upper(country))));
                CREATE TABLE result (
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    gameId INTEGER NOT NULL REFERENCES game(id),
                    at REAL NOT NULL,
                    outcome TEXT NOT NULL CHECK (outcome IN ('win', 'loss', 'draw')),
                    roundsWon INTEGER NOT NULL CHECK (roundsWon >= 0),
                    points INTEGER NOT NULL CHECK (points >= 0),
                    PRIMARY KEY (playerId, gameId)) WITHOUT ROWID;
                CREATE INDEX result_player_time ON result (playerId, at);
                CREATE TABLE playerTotals (
                    playerId INTEGER PRIMARY KEY REFERENCES player(id),
                    games INTEGER NOT NULL DEFAULT 0 CHECK (games >= 0),
                    wins INTEGER NOT NULL DEFAULT 0 CHECK (wins >= 0),
                    losses INTEGER NOT NULL DEFAULT 0 CHECK (losses >= 0),
                    draws INTEGER NOT NULL DEFAULT 0 CHECK (draws >= 0),
                    roundsWon INTEGER NOT NULL DEFAULT 0 CHECK (roundsWon >= 0),
                    points INTEGER NOT NULL DEFAULT 0 CHECK (points >= 0),
                    bestDayGames INTEGER NOT NULL DEFAULT 0 CHECK (bestDayGames >= 0),
                    podiums INTEGER NOT NULL DEFAULT 0 CHECK (podiums >= 0),
                    tournamentsWon INTEGER NOT NULL DEFAULT 0 CHECK (tournamentsWon >= 0),
                    CHECK (games = wins + losses + draws));
                CREATE TABLE minigameWins (
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    minigame TEXT NOT NULL,
                    wins INTEGER NOT NULL CHECK (wins >= 0),
                    PRIMARY KEY (playerId, minigame)) WITHOUT ROWID;
                CREATE TABLE minigameRecord (
                    minigame TEXT PRIMARY KEY,
                    score INTEGER NOT NULL CHECK (score >= 0),
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    gameId INTEGER NOT NULL REFERENCES game(id),
                    at REAL NOT NULL);
                CREATE TABLE boardPoints (
                    board TEXT NOT NULL,
                    period INTEGER NOT NULL,
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    points INTEGER NOT NULL CHECK (points > 0),
                    PRIMARY KEY (board, period, playerId)) WITHOUT ROWID;
                CREATE INDEX boardPoints_rank ON boardPoints (board, period, points DESC, playerId);
                CREATE TABLE boardTally (
                    board TEXT NOT NULL,
                    period INTEGER NOT NULL,
                    points INTEGER NOT NULL,
                    players INTEGER NOT NULL CHECK (players >= 0),
                    PRIMARY KEY (board, period, points)) WITHOUT ROWID;
                CREATE TABLE unlockCount (
                    playerId INTEGER PRIMARY KEY REFERENCES player(id),
                    unlocked INTEGER NOT NULL CHECK (unlocked >= 0));
                CREATE TABLE unlockTally (
                    unlocked INTEGER PRIMARY KEY,
                    players INTEGER NOT NULL CHECK (players >= 0));
                INSERT INTO unlockCount (playerId, unlocked) SELECT ownerId, COUNT(*) FROM unlock GROUP BY ownerId;
                INSERT INTO unlockTally (unlocked, players) SELECT unlocked, COUNT(*) FROM unlockCount GROUP BY unlocked;
                CREATE TRIGGER unlock_counted AFTER INSERT ON unlock BEGIN
                    UPDATE unlockTally SET players = players - 1
                        WHERE unlocked = (SELECT unlocked FROM unlockCount WHERE playerId = NEW.ownerId);
                    INSERT INTO unlockCount (playerId, unlocked) VALUES (NEW.ownerId, 1)
                        ON CONFLICT (playerId) DO UPDATE SET unlocked = unlocked + 1;
                    INSERT INTO unlockTally (unlocked, players)
                        VALUES ((SELECT unlocked FROM unlockCount WHERE playerId = NEW.ownerId), 1)
                        ON CONFLICT (unlocked) DO UPDATE SET players = players + 1;
                END;
                CREATE TRIGGER unlock_uncounted AFTER DELETE ON unlock BEGIN
                    UPDATE unlockTally SET players = players - 1
                        WHERE unlocked = (SELECT unlocked FROM unlockCount WHERE playerId = OLD.ownerId);
                    UPDATE unlockCount SET unlocked = unlocked - 1 WHERE playerId = OLD.ownerId;
                    INSERT INTO unlockTally (unlocked, players)
                        VALUES ((SELECT unlocked FROM unlockCount WHERE playerId = OLD.ownerId), 1)
                        ON CONFLICT (unlocked) DO UPDATE SET players = players + 1;
                END;
                CREATE TABLE league (
                    week INTEGER NOT NULL,
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    tier INTEGER NOT NULL CHECK (tier BETWEEN 1 AND 5),
                    groupNumber INTEGER NOT NULL CHECK (groupNumber >= 1),
                    points INTEGER NOT NULL CHECK (points >= 0),
                    PRIMARY KEY (week, playerId)) WITHOUT ROWID;
                CREATE INDEX league_group ON league (week, tier, groupNumber, points DESC, playerId);
                CREATE INDEX league_player ON league (playerId, week);
                CREATE TABLE achievement (
                    playerId INTEGER NOT NULL REFERENCES player(id),
                    kind TEXT NOT NULL,
                    tier INTEGER NOT NULL CHECK (tier >= 1),
                    grantedAt REAL NOT NULL,
                    gameId INTEGER REFERENCES game(id),
                    round INTEGER,
                    PRIMARY KEY (playerId, kind, tier)) WITHOUT ROWID;
                CREATE INDEX achievement_game ON achievement (gameId, playerId);
                """)
        }
        // A tournament's board reads its entries in rank order (after v3-locations-tournaments).
        migrator.registerMigration("v3-stats-tournament-boards") { db in
            try db.execute(sql: "CREATE INDEX tournamentEntry_board ON tournamentEntry (tournamentId, total DESC, playerId)")
        }
    }
}
