# Type stubs for usmbridge (the extension module's names are bound lazily).
from typing import Any, ClassVar, Literal, Optional, Tuple, Union

import numpy as np

__version__: str

class ForkError(RuntimeError):
    """Raised by every call in a child created by fork() from a process that
    had loaded usmbridge: use the 'spawn' or 'forkserver' start method."""

class Array:
    """A zero-copy view of host memory or SYCL USM."""

    # DLPack 1.3 C exchange API: a PyCapsule named "dlpack_exchange_api"
    # holding the static DLPackExchangeAPI table; the 1.2 int form is its
    # address.
    __dlpack_c_exchange_api__: ClassVar[Any]
    __c_dlpack_exchange_api__: ClassVar[int]

    @property
    def __sycl_usm_array_interface__(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def dtype(self) -> Union[np.dtype[Any], str]:
        """A numpy.dtype where NumPy knows the type; else the typestring
        ('|f4'), or the DLPack name ('bfloat16') where there is none."""
    @property
    def strides(self) -> Tuple[int, ...]:
        """Strides in elements, not bytes (as dpctl's usm_ndarray gives
        them): always a tuple, C-contiguous arrays included."""
    @property
    def offset(self) -> int:
        """Elements from the data pointer of the array's DLPack export to
        element 0: 0 except with negative strides."""
    @property
    def T(self) -> "Array":
        """The array with its axes reversed (a view)."""
    @property
    def mT(self) -> "Array":
        """The array with its last two axes swapped (a view)."""
    @property
    def sycl_queue(self) -> Any:
        """The dpctl.SyclQueue of a USM array; AttributeError for host memory."""
    @property
    def __usm_ndarray__(self) -> Any:
        """The array as a dpnp.tensor.usm_ndarray over the same memory (USM only)."""
    @property
    def usm_type(self) -> Optional[Literal["device", "shared", "host"]]: ...
    @property
    def device(self) -> Tuple[int, int]:
        """(DLPack device type, device id): (1, 0) for host memory, (14, i)
        for SYCL device i."""
    @property
    def data(self) -> int:
        """The address of element 0."""
    @property
    def readonly(self) -> bool: ...
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any: ...
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

def asarray(obj: Any, /) -> Array:
    """Return a zero-copy Array over obj's __sycl_usm_array_interface__."""

def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[bool] = None) -> Array:
    """Return an Array over the data of x, as the array API's from_dlpack.

    device: None (where x is), "cpu", a SYCL filter string ("opencl:cpu"),
    a DLPack (device_type, device_id) pair, a dpctl.SyclDevice or a
    dpctl.SyclQueue. copy: None shares memory where possible, True always
    copies, False never does (BufferError where a copy is needed)."""
