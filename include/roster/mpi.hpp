#pragma once
/// Rank binding with an MPI communicator the program already has: the local
/// rank and size from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) instead of
/// the launcher's variables, and a job-wide check of the placement. Header
/// only, over the program's own MPI (include <mpi.h> first, or let this
/// header include it); nothing in roster's libraries needs MPI.

#include <roster/binding.hpp>

// The C API is enough: leave out the C++ bindings that Open MPI and MPICH
// still ship (their inline code warns under -Wextra).
#if !defined(OMPI_SKIP_MPICXX)
#  define OMPI_SKIP_MPICXX 1
#endif
#if !defined(MPICH_SKIP_MPICXX)
#  define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <sched.h>

#include <cstdio>
#include <string>
#include <vector>

namespace roster::mpi {

namespace detail {

inline error mpi_error(const char* call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) text[0] = '\0';
  return error(errc::unavailable, std::string("roster::mpi: ") + call + " failed: " + text + " (" + std::to_string(code) + ")",
               "check that MPI is initialized (MPI_Init) and the communicator is valid; roster::mpi calls are "
               "collective over it");
}

// Gathers one string per rank on rank 0 of `comm` (the others get nothing).
inline expected<std::vector<std::string>> gather(MPI_Comm comm, const std::string& mine) {
  int rank = 0, size = 0;
  if (int rc = MPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS) return unexpected{mpi_error("MPI_Comm_rank", rc)};
  if (int rc = MPI_Comm_size(comm, &size); rc != MPI_SUCCESS) return unexpected{mpi_error("MPI_Comm_size", rc)};
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0), offsets(lengths.size());
  if (int rc = MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm); rc != MPI_SUCCESS)
    return unexpected{mpi_error("MPI_Gather", rc)};
  std::size_t total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[i]);
  }
  std::string all(total, '\0');
  if (int rc = MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm);
      rc != MPI_SUCCESS)
    return unexpected{mpi_error("MPI_Gatherv", rc)};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  return out;
}

}  // namespace detail

/// Binds this rank as roster::bind_rank does, with the node's ranks taken
/// from `comm` (MPI_Comm_split_type over it) and every local rank's CPU set
/// shared, so the closest policy places ranks exactly. Collective over
/// `comm`. A launcher variable that disagrees with the communicator is said
/// once on stderr and in the binding's reasons.
[[nodiscard]] inline expected<rank_binding> bind(MPI_Comm comm, const bind_options& options = {}) {
  MPI_Comm node = MPI_COMM_NULL;
  if (int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node); rc != MPI_SUCCESS)
    return unexpected{detail::mpi_error("MPI_Comm_split_type", rc)};
  int rank = 0, size = 0, world = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);
  MPI_Comm_rank(comm, &world);
  // Every local rank's CPUs, so each sees where its siblings were placed.
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned char> mine(CPU_SETSIZE, 0), all(static_cast<std::size_t>(size) * CPU_SETSIZE, 0);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c) mine[static_cast<std::size_t>(c)] = CPU_ISSET(c, &set) ? 1 : 0;
  const int rc = MPI_Allgather(mine.data(), CPU_SETSIZE, MPI_UNSIGNED_CHAR, all.data(), CPU_SETSIZE,
                               MPI_UNSIGNED_CHAR, node);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) return unexpected{detail::mpi_error("MPI_Allgather", rc)};
  node_ranks ranks{rank, size, {}};
  for (int r = 0; r < size; ++r) {
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (all[static_cast<std::size_t>(r) * CPU_SETSIZE + static_cast<std::size_t>(c)]) cpus.push_back(c);
    ranks.cpus.push_back(std::move(cpus));
  }
  auto note = set_node_ranks(std::move(ranks));
  if (!note) return std::move(note).error();
  auto b = bind_rank(options);
  if (!b) return b;
  b->world_rank = world;
  if (!note->empty()) {
    static bool said = false;
    if (!said) std::fprintf(stderr, "roster: %s\n", note->c_str());
    said = true;
    b->circuit_reason += "; " + *note;
  }
  return b;
}

/// Checks the whole job's placement: gathers every rank's binding_record on
/// rank 0 of `comm` and runs roster::check_placement there. Collective over
/// `comm`; rank 0 gets the report, the others an empty one (ok()).
[[nodiscard]] inline expected<job_check> check_job(MPI_Comm comm, const rank_binding& mine) {
  auto records = detail::gather(comm, binding_record(mine));
  if (!records) return std::move(records).error();
  if (records->empty()) return job_check{};
  return check_placement(*records);
}

}  // namespace roster::mpi
