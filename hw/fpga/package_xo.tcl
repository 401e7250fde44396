# package_xo.tcl - package the RTL model (hw/rtl, top cxl_kernel) as a Vitis RTL kernel object (.xo).
#
# usage: vivado -mode batch -source hw/fpga/package_xo.tcl -tclargs OUT.xo RTL_DIR
#   OUT.xo   the kernel object to write (hw/fpga/build.sh uses build/fpga/cxl_kernel_rtl.xo)
#   RTL_DIR  hw/rtl: every *.v there plus the headers it includes (*.vh: cxl_defs.vh, cxl_layout.vh)
# Work files go next to OUT.xo in cxl_kernel_rtl_pack/ (deleted and rebuilt on every run): the throw-away
# Vivado project, the packaged IP (ip/, what package_xo reads) and kernel.xml (the argument list v++ and
# XRT see: check that its argument ids follow hw/hls/cxl_kernel_regs.h, enum cxlk_arg).
#
# The flow is the documented one for RTL kernels (UG1393, "Packaging the RTL Code as a Vitis XO" and the
# package_xo command; AMD's example Xilinx/Vitis_Accel_Examples rtl_kernels/rtl_vadd/scripts/
# package_kernel.tcl and gen_xo.tcl): package the project as IP, mark it a Vitis RTL kernel
# (sdx_kernel, sdx_kernel_type rtl), tie every AXI interface to ap_clk, describe the s_axi_control
# registers (one per kernel argument, pointers tagged with the AXI master they address), then package_xo
# with the control protocol of hw/rtl/cxl_kernel.v (ap_ctrl_hs: UG1393 "Creating the XO File from the
# RTL Kernel"; the HLS kernel uses ap_ctrl_chain, the host sees no difference for one run at a time).
# The packaged IP is not tied to a part: v++ --link implements it for the platform's device.

if {$::argc != 2} {
    puts stderr "usage: vivado -mode batch -source package_xo.tcl -tclargs OUT.xo RTL_DIR"
    exit 1
}
set xo_path [file normalize [lindex $::argv 0]]
set rtl_dir [file normalize [lindex $::argv 1]]
set kernel  cxl_kernel

set sources [lsort [glob -nocomplain -directory $rtl_dir *.v]]
set headers [lsort [glob -nocomplain -directory $rtl_dir *.vh]]
if {![file exists [file join $rtl_dir $kernel.v]]} {
    puts stderr "package_xo.tcl: $rtl_dir/$kernel.v not found (RTL_DIR must be hw/rtl)"
    exit 1
}

set work     [file join [file dirname $xo_path] cxl_kernel_rtl_pack]
set proj_dir [file join $work project]
set ip_dir   [file join $work ip]
file delete -force $work
file mkdir $work

# s_axi_control registers after the control block: name (= the C parameter of cxl_kernel(), so the
# connectivity files and the host name the same arguments in both kernels), offset, width in bits, and
# whether it is a buffer address on m_axi_gmem. Must equal hw/hls/cxl_kernel_regs.h (CXLK_*), which
# mirrors the map Vitis HLS gives the C kernel; tests/cli/fpga_build_dryrun.sh checks this table against
# it. The registers are added in argument order, which is the order XRT numbers the arguments in
# (xrtRunSetArg indices, enum cxlk_arg). ap_return (0x10) is deliberately not a register: it would become
# an extra argument and shift every index; the status is in the result record as well.
set args {
    {params     0x18 64 1 "const cxl_params *: model parameters, read when init != 0"}
    {state      0x24 64 1 "cxl_model *: unused by the RTL (its state is on chip), kept for the C signature"}
    {init       0x30 32 0 "reset the model from params first"}
    {descs      0x38 64 1 "const cxl_desc *: descriptors to submit"}
    {n_descs    0x44 32 0 "number of descriptors"}
    {until      0x4C 64 0 "advance the model to this cycle (exclusive)"}
    {stop       0x58 32 0 "return once a completion is buffered"}
    {comps      0x60 64 1 "cxl_completion *: completions written here"}
    {max_comps  0x6C 32 0 "room in comps, in completions"}
    {result     0x74 64 1 "cxl_kernel_result *: status and model state after the run"}
    {stats      0x80 64 1 "cxl_stats *: statistics, written when want_stats != 0"}
    {want_stats 0x8C 32 0 "copy the statistics to stats"}
}

# ---- a project holding the RTL, packaged as IP ---------------------------------------------------
create_project -force ${kernel}_pack $proj_dir
add_files -norecurse [concat $sources $headers]
if {[llength $headers] > 0} {
    set_property file_type {Verilog Header} [get_files $headers]
}
set_property include_dirs [list $rtl_dir] [current_fileset]
set_property top $kernel [current_fileset]
update_compile_order -fileset sources_1

ipx::package_project -root_dir $ip_dir -vendor cxlsim.org -library kernel -taxonomy /KernelIP \
    -import_files -set_current false
ipx::unload_core [file join $ip_dir component.xml]
ipx::edit_ip_in_project -upgrade true -name ${kernel}_edit -directory $ip_dir [file join $ip_dir component.xml]
set core [ipx::current_core]
set_property core_revision 1 $core

# The interfaces Vivado must have inferred from the port names of cxl_kernel.v.
foreach busif {ap_clk ap_rst_n s_axi_control m_axi_gmem} {
    if {[llength [ipx::get_bus_interfaces $busif -of_objects $core]] == 0} {
        puts stderr "package_xo.tcl: interface $busif was not inferred from hw/rtl/cxl_kernel.v's ports"
        exit 1
    }
}
# the imported headers stay include files (not compiled on their own)
foreach fg [ipx::get_file_groups -of_objects $core] {
    foreach f [ipx::get_files -of_objects $fg] {
        if {[string match *.vh [get_property NAME $f]]} {
            set_property is_include true $f
        }
    }
}

# ---- clock, reset, interrupt ---------------------------------------------------------------------
# Every AXI interface runs on ap_clk; ap_rst_n is its active-low reset (UG1700, "Packaging the RTL Code
# as a Vitis XO": one clock per interface, an optional active-low reset through ASSOCIATED_RESET).
ipx::associate_bus_interfaces -busif m_axi_gmem -clock ap_clk $core
ipx::associate_bus_interfaces -busif s_axi_control -clock ap_clk $core
ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core
set rst_if [ipx::get_bus_interfaces ap_rst_n -of_objects $core]
set polarity [ipx::get_bus_parameters POLARITY -of_objects $rst_if]
if {[llength $polarity] == 0} {
    set polarity [ipx::add_bus_parameter POLARITY $rst_if]
}
set_property value ACTIVE_LOW $polarity
# ap_clk's frequency is the platform's kernel clock, set by v++ --link ("user" resolution lets it
# change); 300 MHz is the default kernel clock of the Alveo XDMA platforms (UG1393, "Clock Information";
# `platforminfo` prints a platform's clocks).
set clk_if [ipx::get_bus_interfaces ap_clk -of_objects $core]
set freq [ipx::get_bus_parameters FREQ_HZ -of_objects $clk_if]
if {[llength $freq] == 0} {
    set freq [ipx::add_bus_parameter FREQ_HZ $clk_if]
}
set_property value 300000000 $freq
set_property value_resolve_type user $freq
# interrupt = GIE && ISR != 0 (cxl_kernel.v), a level
set irq_if [ipx::get_bus_interfaces interrupt -of_objects $core]
if {[llength $irq_if] > 0} {
    set sens [ipx::get_bus_parameters SENSITIVITY -of_objects $irq_if]
    if {[llength $sens] == 0} {
        set sens [ipx::add_bus_parameter SENSITIVITY $irq_if]
    }
    set_property value LEVEL_HIGH $sens
}

# ---- the s_axi_control register map --------------------------------------------------------------
set mem_map [ipx::add_memory_map s_axi_control $core]
set block   [ipx::add_address_block reg0 $mem_map]
set_property slave_memory_map_ref s_axi_control [ipx::get_bus_interfaces s_axi_control -of_objects $core]

proc add_reg {block name offset bits desc} {
    set reg [ipx::add_register $name $block]
    set_property description $desc $reg
    set_property address_offset $offset $reg
    set_property size $bits $reg
    return $reg
}
# control block (hw/hls/cxl_kernel_regs.h, CXLK_CTRL .. CXLK_ISR; UG1393 "Kernel Controls" register map)
set ctrl [add_reg $block CTRL 0x00 32 "control: ap_start, ap_done, ap_idle, ap_ready, auto_restart"]
foreach {field bit access} {
    AP_START 0 read-write  AP_DONE 1 read-only  AP_IDLE 2 read-only  AP_READY 3 read-only
    AUTO_RESTART 7 read-write
} {
    set f [ipx::add_field $field $ctrl]
    set_property bit_offset $bit $f
    set_property bit_width 1 $f
    set_property access $access $f
}
add_reg $block GIER   0x04 32 "global interrupt enable (bit 0)"
add_reg $block IP_IER 0x08 32 "IP interrupt enable: bit 0 ap_done, bit 1 ap_ready"
add_reg $block IP_ISR 0x0C 32 "IP interrupt status: same bits, toggle on write"
# the kernel arguments
foreach arg $args {
    lassign $arg name offset bits pointer desc
    set reg [add_reg $block $name $offset $bits $desc]
    if {$pointer} {
        set busif [ipx::add_register_parameter ASSOCIATED_BUSIF $reg]
        set_property value m_axi_gmem $busif
    }
}

# ---- mark it a Vitis RTL kernel, save, package ---------------------------------------------------
set_property sdx_kernel true $core
set_property sdx_kernel_type rtl $core
# any device family: v++ implements the kernel for the platform's part
set_property supported_families {} $core
set_property auto_family_support_level level_2 $core
ipx::create_xgui_files $core
ipx::update_checksums $core
ipx::check_integrity -kernel $core
ipx::save_core $core
close_project -delete

package_xo -force -xo_path $xo_path -kernel_name $kernel -ip_directory $ip_dir -ctrl_protocol ap_ctrl_hs \
    -output_kernel_xml [file join $work kernel.xml]
if {![file exists $xo_path]} {
    puts stderr "package_xo.tcl: package_xo did not write $xo_path"
    exit 1
}
puts "package_xo.tcl: wrote $xo_path (kernel.xml in $work)"
