// NgramStore: STAND's n-gram table of each request group (GroupTables).
#pragma once

#include <memory>

#include "spec/drafters/group_tables.h"
#include "spec/drafters/stand/ngram_table.h"

namespace seed::spec {

class NgramStore : public GroupTables<NgramTable> {
 public:
  NgramStore() : GroupTables([] { return std::make_shared<NgramTable>(); }) {}
};

}  // namespace seed::spec
