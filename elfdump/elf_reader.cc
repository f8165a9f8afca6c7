// ElfReader and the first half of ElfProbe: target selection
// (bfd/format.c) and the header checks of elf_object_p (bfd/elfcode.h).
#include "elfdump/elf_reader.h"

#include <cstring>

#include <fmt/format.h>

#include "common/checked.h"
#include "elfdump/elf_constants.h"
#include "elfdump/elf_probe.h"

namespace tileprof::elf {
namespace {

constexpr uint64_t kElf32HeaderSize = 52;
constexpr uint64_t kElf64HeaderSize = 64;
constexpr uint64_t kElf32PhdrSize = 32;
constexpr uint64_t kElf64PhdrSize = 56;
constexpr size_t kMaxMessagesPerTarget = 5;  // BFD's "anti-fuzzer measure"

// BFD prints a target's cached messages after one "size: " prefix, one per
// line.
std::string JoinLines(const std::vector<std::string>& lines) {
  std::string joined;
  for (const std::string& line : lines) {
    if (!joined.empty()) joined += '\n';
    joined += line;
  }
  return joined;
}

// The specific x86 target that BFD would try before the generic one, if any:
// elf64-x86-64, elf32-i386, elf32-iamcu and elf32-x86-64 are little-endian
// targets selected by class and e_machine.
std::optional<ElfTarget> SpecificTarget(bool is_64, bool big_endian, uint16_t machine) {
  if (big_endian) return std::nullopt;
  ElfTarget target;
  target.generic = false;
  target.solaris_links = true;
  if (is_64 && machine == kEmX8664) {
    target.arch_i386 = true;
    target.x86_64 = true;
  } else if (!is_64 && machine == kEmX8664) {
    target.arch_i386 = true;
    target.x86_64 = true;  // elf32-x86-64 shares the x86-64 backend hooks
  } else if (!is_64 && machine == kEm386) {
    target.arch_i386 = true;
  } else if (!is_64 && machine == kEmIamcu) {
    target.arch_i386 = false;  // bfd_arch_iamcu
  } else {
    return std::nullopt;
  }
  return target;
}

}  // namespace

bool HasElfMagic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0;
}

ElfReader::ElfReader() : probe_(std::make_unique<ElfProbe>()) {}
ElfReader::~ElfReader() = default;

const ElfObject& ElfReader::Read(const ElfInput& input) {
  object_.recognized = false;
  object_.sections.clear();
  object_.messages.clear();
  std::span<const uint8_t> bytes = input.bytes;
  // Checks every ELF target makes before it can issue a message: magic,
  // EI_VERSION, a known EI_CLASS and EI_DATA, and a whole ELF header.
  if (!HasElfMagic(bytes) || bytes.size() < 16 || bytes[6] != kEvCurrent) return object_;
  if (bytes[4] != kElfClass32 && bytes[4] != kElfClass64) return object_;
  if (bytes[5] != kElfDataLsb && bytes[5] != kElfDataMsb) return object_;
  bool is_64 = bytes[4] == kElfClass64;
  bool big_endian = bytes[5] == kElfDataMsb;
  if (bytes.size() < (is_64 ? kElf64HeaderSize : kElf32HeaderSize)) return object_;
  ByteReader header(bytes, big_endian ? std::endian::big : std::endian::little);
  uint16_t machine = static_cast<uint16_t>(header.UncheckedWord(18, 2));

  bool read_only = false;
  bool accepted = false;
  std::vector<std::string> specific_messages;
  std::vector<std::string> generic_messages;
  if (auto specific = SpecificTarget(is_64, big_endian, machine)) {
    accepted = probe_->Run(input, *specific, &read_only);
    specific_messages = probe_->messages();
  }
  // The generic target runs when the specific one failed (or there is none).
  // When a specific, non-default target matched, BFD also runs the generic
  // one but prefers the specific match, so that run changes nothing visible.
  bool generic_chosen = false;
  if (!accepted) {
    accepted = generic_chosen = probe_->Run(input, ElfTarget{}, &read_only);
    generic_messages = probe_->messages();
  }
  if (accepted) {
    // BFD prints the messages cached by the target it chose.
    const auto& chosen = generic_chosen ? generic_messages : specific_messages;
    if (!chosen.empty()) object_.messages.push_back(JoinLines(chosen));
    object_.recognized = true;
    object_.is_64 = probe_->is_64();
    object_.big_endian = probe_->big_endian();
    object_.type = probe_->type();
    object_.machine = probe_->machine();
    for (const ProbeSection& s : probe_->sections())
      object_.sections.push_back({s.name, s.size, s.vma, s.flags, s.shndx});
    return object_;
  }
  // On failure BFD prints the cached messages only when exactly one target
  // left any (bfd/format.c, the end of bfd_check_format_matches).
  if (specific_messages.empty() != generic_messages.empty()) {
    object_.messages.push_back(
        JoinLines(specific_messages.empty() ? generic_messages : specific_messages));
  }
  return object_;
}

Expected<uint64_t> ElfReader::CommonSize(std::vector<std::string>* messages) {
  if (!object_.recognized) return uint64_t{0};
  return probe_->CommonSize(messages);
}

void ElfProbe::Say(std::string message) {
  // While recognising, BFD caches at most five messages per target; later
  // (reading symbols for --common) every message is printed.
  if (!recognising_ || messages_.size() < kMaxMessagesPerTarget)
    messages_.push_back(std::move(message));
}

bool ElfProbe::Readable(uint64_t offset, uint64_t length) const {
  return InBounds(offset, length, data_.size());
}

uint64_t ElfProbe::Word(uint64_t offset) const {
  return reader_.UncheckedWord(offset, is_64_ ? 8 : 4);
}

bool ElfProbe::Run(const ElfInput& input, const ElfTarget& target, bool* read_only) {
  data_ = input.bytes;
  nominal_size_ = input.nominal_size;
  element_size_ = input.element_size;
  recognising_ = true;
  diag_ = input.diagnostic_name;
  target_ = target;
  read_only_ = read_only;
  shdrs_.clear();
  sections_.clear();
  onesymtab_ = 0;
  dynsymtab_ = 0;
  symtab_hdr_ = ProbeShdr{};
  shndx_list_.clear();
  has_syms_ = false;
  num_group_ = 0;
  group_sect_.clear();
  group_entries_.clear();
  group_search_offset_ = 0;
  messages_.clear();

  if (!ReadHeaders()) return false;
  if (e_shstrndx_ != 0 && e_shoff_ >= ehdr_size_) {
    // Section 0 is the dummy entry; the loop creates the BFD sections, and
    // recursion inside it creates some of them out of index order.
    for (uint32_t i = 1; i < e_shnum_; ++i)
      if (!FromShdr(i)) return false;
    if (!SetupSections()) return false;
  }
  return true;
}

bool ElfProbe::ReadShdr(uint64_t offset, ProbeShdr* out) {
  if (!Readable(offset, shdr_size_)) return false;
  const unsigned w = is_64_ ? 8 : 4;
  ProbeShdr& s = *out;
  s = ProbeShdr{};
  s.name = static_cast<uint32_t>(reader_.UncheckedWord(offset, 4));
  s.type = static_cast<uint32_t>(reader_.UncheckedWord(offset + 4, 4));
  s.flags = reader_.UncheckedWord(offset + 8, w);
  s.addr = reader_.UncheckedWord(offset + 8 + w, w);
  s.offset = reader_.UncheckedWord(offset + 8 + 2 * w, w);
  s.size = reader_.UncheckedWord(offset + 8 + 3 * w, w);
  s.link = static_cast<uint32_t>(reader_.UncheckedWord(offset + 8 + 4 * w, 4));
  s.info = static_cast<uint32_t>(reader_.UncheckedWord(offset + 12 + 4 * w, 4));
  s.addralign = reader_.UncheckedWord(offset + 16 + 4 * w, w);
  s.entsize = reader_.UncheckedWord(offset + 16 + 5 * w, w);
  // PR 23657, checked as each header is swapped in, against what BFD thinks
  // the file size is (for a member: min(ar_size, archive size)).
  if (s.type != kShtNobits && nominal_size_ != 0 &&
      (s.offset > nominal_size_ || s.size > nominal_size_ - s.offset) && !*read_only_) {
    Say(fmt::format("warning: {} has a section extending past end of file", diag_));
    *read_only_ = true;
  }
  return true;
}

bool ElfProbe::ReadHeaders() {
  is_64_ = data_[4] == kElfClass64;
  big_endian_ = data_[5] == kElfDataMsb;
  reader_ = ByteReader(data_, big_endian_ ? std::endian::big : std::endian::little);
  ehdr_size_ = is_64_ ? kElf64HeaderSize : kElf32HeaderSize;
  shdr_size_ = is_64_ ? 64 : 40;
  sym_size_ = is_64_ ? 24 : 16;
  const uint64_t w = is_64_ ? 8 : 4;
  e_type_ = static_cast<uint16_t>(reader_.UncheckedWord(16, 2));
  e_machine_ = static_cast<uint16_t>(reader_.UncheckedWord(18, 2));
  e_phoff_ = reader_.UncheckedWord(24 + w, static_cast<unsigned>(w));
  e_shoff_ = reader_.UncheckedWord(24 + 2 * w, static_cast<unsigned>(w));
  const uint64_t tail = 28 + 3 * w;  // e_ehsize
  e_phnum_ = static_cast<uint32_t>(reader_.UncheckedWord(tail + 4, 2));
  e_shentsize_ = static_cast<uint16_t>(reader_.UncheckedWord(tail + 6, 2));
  e_shnum_ = static_cast<uint32_t>(reader_.UncheckedWord(tail + 8, 2));
  e_shstrndx_ = static_cast<uint32_t>(reader_.UncheckedWord(tail + 10, 2));

  if (e_type_ == kEtCore) return false;  // a core file, not an object
  if (e_shoff_ < ehdr_size_ && e_type_ == kEtRel) return false;
  if (e_shentsize_ != shdr_size_ && e_shnum_ != 0) return false;
  if (e_shoff_ < ehdr_size_ && e_shnum_ != 0) return false;

  ProbeShdr first;
  if (e_shoff_ >= ehdr_size_) {
    if (!ReadShdr(e_shoff_, &first)) return false;
    // Extended numbering: the real counts live in section header 0.
    if (e_shnum_ == 0) {
      if (first.size >= kShnLoreserve || first.size == 0) return false;
      e_shnum_ = static_cast<uint32_t>(first.size);
    }
    if (e_shstrndx_ == kShnXindex) e_shstrndx_ = first.link;
    if (e_phnum_ == kPnXnum && first.info != 0) e_phnum_ = first.info;
    // BFD reads the last header first: a table that does not fit is
    // rejected before anything is allocated for it.
    if (e_shnum_ != 1) {
      auto span = CheckedMul(e_shnum_ - 1, shdr_size_);
      auto last = span ? CheckedAdd(e_shoff_, *span) : std::nullopt;
      if (!last || *last <= e_shoff_ || !Readable(*last, shdr_size_)) return false;
    }
  }
  if (e_shnum_ != 0) {
    shdrs_.resize(e_shnum_);
    shdrs_[0] = first;
    for (uint32_t i = 1; i < e_shnum_; ++i) {
      ProbeShdr& s = shdrs_[i];
      if (!ReadShdr(e_shoff_ + uint64_t{i} * shdr_size_, &s)) return false;
      if (s.link >= e_shnum_ &&
          !(target_.solaris_links && (s.link == kShnLoreserve || s.link == kShnAfter)))
        return false;
      if (((s.flags & kShfInfoLink) != 0 || s.type == kShtRela || s.type == kShtRel) &&
          s.info >= e_shnum_)
        return false;
    }
    if (e_shstrndx_ >= e_shnum_ || shdrs_[e_shstrndx_].type != kShtStrtab) {
      // PR 2257: be kind and carry on without section names.
      e_shstrndx_ = kShnUndef;
      if (!*read_only_) {
        Say(fmt::format("warning: {} has a corrupt string table index", diag_));
        *read_only_ = true;
      }
    }
  } else if (e_shstrndx_ != kShnUndef) {
    return false;
  }
  return e_phnum_ == 0 || ReadProgramHeaders();
}

bool ElfProbe::ReadProgramHeaders() {
  const uint64_t phdr_size = is_64_ ? kElf64PhdrSize : kElf32PhdrSize;
  // "an impossibly large number of program headers"
  if (nominal_size_ != 0 && e_phnum_ > nominal_size_ / phdr_size) return false;
  for (uint64_t i = 0; i < e_phnum_; ++i) {
    auto offset = CheckedAdd(e_phoff_, i * phdr_size);
    if (!offset || !Readable(*offset, phdr_size)) return false;
    uint64_t align = Word(*offset + (is_64_ ? 48 : 28));
    if ((align & (align - 1)) != 0 && !*read_only_) {
      Say(fmt::format("warning: {} has a program header with invalid alignment", diag_));
      *read_only_ = true;
    }
  }
  return true;
}

}  // namespace tileprof::elf
