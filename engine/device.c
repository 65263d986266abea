/* The device registry: a device's table of storage and kernel functions. */
#include "device.h"

const tx_device_i *tx_device_of(tx_device dev) {
    TX_ASSERT(dev == TX_DEVICE_GPU || dev == TX_DEVICE_CPU);
    return dev == TX_DEVICE_CPU ? &tx_cpu_device : &tx_gpu_device;
}
