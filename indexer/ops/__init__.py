"""Operations on stores: sync, search and fusion, dynamics, passes, rebuild, verify, add, recall, doctor."""
