// Mach-O constants and plain structs mirroring the on-disk layout used by
// HWX files (64-bit Mach-O with the private magic 0xBEEFFACE).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ane::macho {

constexpr uint32_t kHwxMagic = 0xBEEFFACE;
constexpr uint32_t kHeaderSize = 32;

// Load command numbers seen in HWX files.
constexpr uint32_t LC_SYMTAB = 0x02;
constexpr uint32_t LC_THREAD = 0x04;
constexpr uint32_t LC_LOADFVMLIB = 0x06;
constexpr uint32_t LC_IDENT = 0x08;
constexpr uint32_t LC_SEGMENT_64 = 0x19;
constexpr uint32_t LC_NOTE = 0x31;
constexpr uint32_t LC_ANE_BUFFER = 0x40;  // named buffer, compilers >= v7

constexpr uint32_t kSegmentCommandSize = 0x48;
constexpr uint32_t kSectionSize = 0x50;
constexpr uint32_t kSymtabCommandSize = 0x18;
constexpr uint32_t kNlistSize = 16;
constexpr uint32_t kRelocationSize = 8;

// nlist_64 n_type values used by HWX symbol tables.
constexpr uint8_t N_EXT = 0x01;
constexpr uint8_t N_SECT = 0x0e;
constexpr uint8_t N_GSYM = 0x20;
constexpr uint8_t N_LSYM = 0x80;

// LC_THREAD flavors.
constexpr uint32_t kThreadProgram = 1;  // slot table, task count, network name
constexpr uint32_t kThreadBuffer = 3;   // one I/O tensor descriptor
constexpr uint32_t kThreadPackedProgram = 4;  // H14 - H18 program descriptor ("kind 4")

const char* command_name(uint32_t cmd);

struct MachHeader {
  uint32_t magic = kHwxMagic;
  uint32_t cputype = 0;
  uint32_t cpusubtype = 0;
  uint32_t filetype = 0;
  uint32_t ncmds = 0;
  uint32_t sizeofcmds = 0;
  uint32_t flags = 0;
  uint32_t reserved = 0;
};

struct RelocationInfo {
  int32_t address = 0;  // r_address
  uint32_t info = 0;    // r_symbolnum:24 r_pcrel:1 r_length:2 r_extern:1 r_type:4

  uint32_t symbolnum() const { return info & 0xffffff; }
  bool pcrel() const { return (info >> 24) & 1; }
  uint32_t length() const { return (info >> 25) & 3; }
  bool external() const { return (info >> 27) & 1; }
  uint32_t type() const { return info >> 28; }
};

struct Section64 {
  std::string sectname;  // char[16] on disk
  std::string segname;   // char[16] on disk
  uint64_t addr = 0;
  uint64_t size = 0;
  uint32_t offset = 0;
  uint32_t align = 0;
  uint32_t reloff = 0;
  uint32_t nreloc = 0;
  uint32_t flags = 0;
  uint32_t reserved1 = 0;
  uint32_t reserved2 = 0;
  uint32_t reserved3 = 0;
  std::vector<RelocationInfo> relocations;  // the nreloc entries at reloff
};

struct Nlist64 {
  uint32_t strx = 0;
  uint8_t type = 0;
  uint8_t sect = 0;
  uint16_t desc = 0;
  uint64_t value = 0;
};

}  // namespace ane::macho
