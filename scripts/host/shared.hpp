// Shared memory that logs every access, for the host run (cuda_host.hpp includes it): each element read or written
// is logged with its thread, barrier phase, array, byte and the stage file's line; a read of a word no thread of
// the block has written fails, naming the line.
#pragma once

namespace ladder_host {

struct Index {  // an index into a shared array, and the source line that computed it
  std::size_t i;
  int line;
  template <typename T>
  Index(T v, int l = __builtin_LINE()) : i(static_cast<std::size_t>(v)), line(l) {}  // NOLINT: implicit by design
};

template <typename T>
class Elem {  // one shared element: reading or writing it is logged
 public:
  Elem(const char* array, std::size_t byte, int line, std::size_t end)
      : array_(array), byte_(byte), line_(line), end_(end) {}
  operator T() const { return load(); }  // NOLINT: reads convert implicitly, as a float lvalue does
  Elem& operator=(T v) { return store(v); }
  Elem& operator=(const Elem& other) { return store(other.load()); }
  Elem& operator+=(T v) { return store(load() + v); }
  Elem& operator-=(T v) { return store(load() - v); }
  Elem& operator*=(T v) { return store(load() * v); }

 private:
  T load() const {
    Shared& s = run().shared;
    check();
    T v;
    std::memcpy(&v, &s.bytes[byte_], sizeof(T));
    if (!s.written[byte_])
      fail("line %d: thread %u reads %s at byte %zu, which no thread of this block has written yet (a missing "
           "barrier, or a slot the kernel never stores)", line_, self().tid, array_, byte_);
    note("ld", static_cast<double>(v));
    return v;
  }
  Elem& store(T v) {
    Shared& s = run().shared;
    check();
    std::memcpy(&s.bytes[byte_], &v, sizeof(T));
    std::memset(&s.written[byte_], 1, sizeof(T));
    if constexpr (std::is_same_v<T, float>) first_value(self(), v);
    note("st", static_cast<double>(v));
    return *this;
  }
  void check() const {
    if (byte_ + sizeof(T) > end_)
      fail("line %d: %s reaches byte %zu of shared memory, past its end at byte %zu", line_, array_,
           byte_ + sizeof(T), end_);
  }
  void note(const char* op, double v) const {
    Fiber& f = self();
    logf("S %s %u %u %u %s %zu %zu %d %.9g\n", op, f.tid, f.phase, f.seq++, array_, byte_, sizeof(T), line_, v);
  }
  const char* array_;
  std::size_t byte_;
  int line_;
  std::size_t end_;
};

template <std::size_t... Dims>
constexpr std::size_t kCount = (std::size_t{1} * ... * Dims);  // the elements of an array of these dimensions

template <typename T, std::size_t... Dims>
class View;
template <typename T>
class View<T> : public Elem<T> {  // a scalar __shared__ variable
 public:
  View(const char* array, std::size_t byte, std::size_t end, int line = 0) : Elem<T>(array, byte, line, end) {}
  using Elem<T>::operator=;
};
template <typename T, std::size_t D, std::size_t... Rest>
class View<T, D, Rest...> {  // D = 0: of unknown length (the dynamic array, or a pointer to a shared array)
 public:
  View(const char* array, std::size_t byte, std::size_t end, int line = 0)
      : array_(array), byte_(byte), end_(end), line_(line) {}
  template <std::size_t E>
  View(const View<T, E, Rest...>& a) : array_(a.array_), byte_(a.byte_), end_(a.end_), line_(a.line_) {}  // NOLINT
  template <typename, std::size_t...>
  friend class View;
  auto operator[](Index ix) const {
    if (D && ix.i >= D) fail("line %d: %s[%zu] is past its %zu elements", ix.line, array_, ix.i, D);
    const std::size_t at = byte_ + ix.i * kCount<Rest...> * sizeof(T);
    if constexpr (sizeof...(Rest) == 0) return Elem<T>(array_, at, ix.line, end_);
    else return View<T, Rest...>(array_, at, end_, ix.line);
  }

 private:
  const char* array_;
  std::size_t byte_, end_;
  int line_;
};

// `__shared__ T name[D...];` becomes `auto name = ladder_host::shared<T, D...>("name");`: the block's one copy.
// The dynamic array starts at byte 0 and the static ones follow it, each on a 16-byte boundary (the GPU puts the
// static ones first). No count depends on where an array starts: a request touches one array, and moving an array
// by a multiple of 16 bytes moves every word of it to the bank as many banks on, which keeps every request's
// words per bank (a float4 stays within its 16 bytes).
template <typename T, std::size_t... Dims>
View<T, Dims...> shared(const char* name, int line = __builtin_LINE()) {  // one array per declaration: name and line
  Shared& s = run().shared;
  const std::string key = std::string(name) + ":" + std::to_string(line);
  // A scalar's reads and writes have no index to carry their line: its messages name the line declaring it.
  for (const auto& a : s.arrays)
    if (a.first == key)
      return View<T, Dims...>(name, a.second, a.second + kCount<Dims...> * sizeof(T), line);
  const std::size_t offset = (s.bytes.size() + 15) / 16 * 16, bytes = kCount<Dims...> * sizeof(T);
  s.bytes.resize(offset + bytes, 0xff);
  s.written.resize(offset + bytes, 0);
  s.arrays.emplace_back(key, offset);
  return View<T, Dims...>(name, offset, offset + bytes, line);
}

// `extern __shared__ T name[];` becomes `auto name = ladder_host::dynamic_shared<T>("name");`: the bytes the launch
// asked for, at byte 0.
template <typename T>
View<T, 0> dynamic_shared(const char* name) {
  return View<T, 0>(name, 0, run().shared.dynamic_bytes);
}

}  // namespace ladder_host
