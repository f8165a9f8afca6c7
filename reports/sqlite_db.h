// Internal to reports/: the thin RAII wrappers over sqlite3 that the
// profile database's writer (sqlite_profile_write.cc) and reader
// (sqlite_profile_read.cc) share.
#pragma once

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace tileprof::report::sqlite {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* statement) : db_(db), statement_(statement) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(statement_); }

  sqlite3_stmt* get() const { return statement_; }

  // Binds the next parameter. Unsigned values keep their bits in SQLite's
  // signed integer.
  Statement& Uint(uint64_t value) {
    sqlite3_bind_int64(statement_, ++bound_, static_cast<int64_t>(value));
    return *this;
  }
  Statement& OptionalUint(std::optional<uint64_t> value) {
    if (value) return Uint(*value);
    sqlite3_bind_null(statement_, ++bound_);
    return *this;
  }
  Statement& Double(std::optional<double> value) {
    // SQLite turns NaN into NULL itself; binding NULL says so plainly.
    if (value && !std::isnan(*value)) {
      sqlite3_bind_double(statement_, ++bound_, *value);
    } else {
      sqlite3_bind_null(statement_, ++bound_);
    }
    return *this;
  }
  Statement& Text(std::string_view text) {
    // SQLITE_TRANSIENT: the text may be a temporary; SQLite copies it.
    sqlite3_bind_text64(statement_, ++bound_, text.data(), text.size(), SQLITE_TRANSIENT,
                        SQLITE_UTF8);
    return *this;
  }

  // Runs an insert and readies the statement for the next row.
  bool Run() {
    int rc = sqlite3_step(statement_);
    Rewind();
    return rc == SQLITE_DONE;
  }

  // Readies the statement to be bound and run again.
  void Rewind() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
    bound_ = 0;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_;
  int bound_ = 0;
};

class Connection {
 public:
  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { Close(); }

  Status Open(const std::string& path, int flags) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK)
      return MakeError("{}: {}", path, db_ ? sqlite3_errmsg(db_) : "cannot open");
    return {};
  }
  bool Close() {
    int rc = sqlite3_close(db_);
    db_ = nullptr;
    return rc == SQLITE_OK;
  }

  Error LastError() const { return Error(sqlite3_errmsg(db_)); }

  Status Exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
      Error error(message ? message : sqlite3_errmsg(db_));
      sqlite3_free(message);
      return error;
    }
    return {};
  }

  // Whether the file has `table` (tables added to the format later are
  // absent from files written before).
  Expected<bool> HasTable(std::string_view table) {
    TILEPROF_ASSIGN_OR_RETURN(
        Statement query, Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"));
    query.Text(table);
    const int rc = sqlite3_step(query.get());
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return LastError();
    return rc == SQLITE_ROW;
  }

  // The column names of `table` (columns added to a table later are absent
  // from files written before).
  Expected<std::vector<std::string>> Columns(std::string_view table) {
    TILEPROF_ASSIGN_OR_RETURN(Statement query,
                              Prepare("SELECT name FROM pragma_table_info(?) ORDER BY cid"));
    query.Text(table);
    std::vector<std::string> columns;
    int rc;
    while ((rc = sqlite3_step(query.get())) == SQLITE_ROW)
      columns.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(query.get(), 0)));
    if (rc != SQLITE_DONE) return LastError();
    return columns;
  }

  Expected<Statement> Prepare(std::string_view sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &statement, nullptr) !=
        SQLITE_OK)
      return LastError();
    return Statement(db_, statement);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace tileprof::report::sqlite
