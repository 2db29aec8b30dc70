/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * ps-lite's SArray<V>: a shared array, copied by reference (a
 * shared_ptr), with ps-lite's members. Memory that SArray allocates
 * itself (the sized constructor, resize, CopyFrom, push_back) comes from
 * the node's bx region once ps::Start() ran, while a quarter of the
 * region is left, else from the heap: ZPush and ZPull of such arrays
 * send them without a copy (Documentation/pslite.rst, "Copies").
 */
#ifndef BX_PS_SARRAY_H_
#define BX_PS_SARRAY_H_

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <vector>

#include "ps/internal/logging.h"
#include "ps/range.h"

namespace ps {
namespace internal {
/* Region or heap memory for SArray (postoffice.h); Free() takes either. */
void* Alloc(size_t bytes);
void Free(void* p);
}  // namespace internal

template <typename V>
class SArray {
 public:
  SArray() {}
  ~SArray() {}

  /* @size elements of value @val. */
  explicit SArray(size_t size, V val = V()) { resize(size, val); }

  /* Copies of a vector's elements (zero-copy: the shared_ptr form). */
  explicit SArray(const std::vector<V>& vec) { CopyFrom(vec.data(), vec.size()); }
  explicit SArray(const std::shared_ptr<std::vector<V>>& vec) {
    ptr_ = std::shared_ptr<V>(vec, vec->data());
    size_ = capacity_ = vec->size();
  }

  /* @data itself (no copy); freed with delete[] when @deletable. */
  SArray(V* data, size_t size, bool deletable = false) {
    if (deletable)
      reset(data, size, [](V* p) { delete[] p; });
    else
      reset(data, size, [](V*) {});
  }

  template <typename W>
  SArray(const std::initializer_list<W>& list) {
    CopyFrom(list.begin(), list.end());
  }

  /* The same bytes seen as another element type (no copy). */
  template <typename W>
  explicit SArray(const SArray<W>& arr) { *this = arr; }
  template <typename W>
  void operator=(const SArray<W>& arr) {
    size_ = arr.size() * sizeof(W) / sizeof(V);
    CHECK_EQ(size_ * sizeof(V), arr.size() * sizeof(W)) << "cannot be divided";
    capacity_ = arr.capacity() * sizeof(W) / sizeof(V);
    ptr_ = std::shared_ptr<V>(arr.ptr(), reinterpret_cast<V*>(arr.data()));
  }

  void CopyFrom(const V* data, size_t size) {
    resize(size);
    if (size) std::memcpy(this->data(), data, size * sizeof(V));
  }
  void CopyFrom(const SArray<V>& other) {
    if (this == &other) return;
    CopyFrom(other.data(), other.size());
  }
  template <typename ForwardIt>
  void CopyFrom(const ForwardIt& first, const ForwardIt& last) {
    size_t size = static_cast<size_t>(std::distance(first, last));
    resize(size);
    std::copy(first, last, data());
  }

  template <typename Deleter>
  void reset(V* data, size_t size, Deleter del) {
    size_ = size;
    capacity_ = size;
    ptr_.reset(data, del);
  }

  void resize(size_t size, V val = V()) {
    size_t cur = size_;
    if (capacity_ >= size) {
      size_ = size;
    } else {
      V* p = static_cast<V*>(internal::Alloc((size + 5) * sizeof(V)));
      CHECK(p) << "out of memory";
      if (size_) std::memcpy(p, data(), size_ * sizeof(V));
      reset(p, size, [](V* q) { internal::Free(q); });
      capacity_ = size + 5;
    }
    if (size <= cur) return;
    V* p = data() + cur;
    for (size_t i = 0; i < size - cur; ++i) p[i] = val;
  }

  void reserve(size_t size) {
    if (capacity_ >= size) return;
    size_t old = size_;
    resize(size);
    size_ = old;
  }

  void clear() { reset(nullptr, 0, [](V*) {}); }
  bool empty() const { return size() == 0; }

  void push_back(const V& val) {
    if (size_ == capacity_) reserve(size_ * 2 + 5);
    data()[size_++] = val;
  }
  void pop_back() { if (size_) --size_; }
  void append(const SArray<V>& arr) {
    if (arr.empty()) return;
    size_t orig = size_;
    resize(size_ + arr.size());
    std::memcpy(data() + orig, arr.data(), arr.size() * sizeof(V));
  }

  /* [begin, end) of this array, sharing its memory. */
  SArray<V> segment(size_t begin, size_t end) const {
    CHECK_GE(end, begin);
    CHECK_LE(end, size());
    SArray<V> ret;
    ret.ptr_ = std::shared_ptr<V>(ptr_, data() + begin);
    ret.size_ = end - begin;
    ret.capacity_ = end - begin;
    return ret;
  }

  V back() const { CHECK(!empty()); return data()[size_ - 1]; }
  V front() const { CHECK(!empty()); return data()[0]; }
  V& operator[](int i) { return data()[i]; }
  const V& operator[](int i) const { return data()[i]; }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  V* begin() { return data(); }
  const V* begin() const { return data(); }
  V* end() { return data() + size(); }
  const V* end() const { return data() + size(); }
  V* data() const { return ptr_.get(); }
  std::shared_ptr<V>& ptr() { return ptr_; }
  const std::shared_ptr<V>& ptr() const { return ptr_; }

 private:
  size_t size_ = 0;
  size_t capacity_ = 0;
  std::shared_ptr<V> ptr_;
};

/* The range of positions of @arr (sorted) whose values are in [lower, upper). */
template <typename V>
Range FindRange(const SArray<V>& arr, V lower, V upper) {
  if (upper <= lower) return Range(0, 0);
  auto lb = std::lower_bound(arr.begin(), arr.end(), lower);
  auto ub = std::lower_bound(arr.begin(), arr.end(), upper);
  return Range(lb - arr.begin(), ub - arr.begin());
}

template <typename V>
std::ostream& operator<<(std::ostream& os, const SArray<V>& obj) {
  os << "[";
  for (size_t i = 0; i < obj.size() && i < 10; ++i) os << (i ? " " : "") << obj[i];
  if (obj.size() > 10) os << " ... (" << obj.size() << ")";
  return os << "]";
}

}  // namespace ps

#endif  // BX_PS_SARRAY_H_
