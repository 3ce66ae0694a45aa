package levelzero

// DriverOf returns the Driver whose ze_driver_handle_t is raw, as a SYCL
// runtime's platform get_native hands it out on the Level Zero backend, so
// that a context from the same runtime can be wrapped with
// Driver.UnsafeContext. It initialises Level Zero if needed; a handle that
// is not one of the drivers Init found is a usm.ErrValue error. Nothing
// is dereferenced: raw is only compared.
func DriverOf(raw uintptr) (*Driver, error) {
	ds, err := Drivers()
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if raw != 0 && d.h == raw {
			return d, nil
		}
	}
	return nil, errValue("levelzero.DriverOf", "driver handle "+hexPtr(raw)+" is not one of the "+itoa(len(ds))+" drivers of this process's loader")
}
